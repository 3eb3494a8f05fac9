/**
 * The ways the Overview breaks its traffic down: each is one `group_by` of
 * the usage summary, with what its rows are called. The per-group table, its
 * caption and the charts all follow the chosen one. Both group per request
 * (not per upstream call), so the window's totals read the same under either.
 */
import { keyLabel } from './keys.js';
import type { SummaryRow } from './types.js';

export interface Breakdown {
  readonly group: 'alias' | 'key';
  /** Singular, lower case: "Per alias", "Requests per key". */
  readonly label: string;
  /** The table's column heading. */
  readonly heading: string;
  /** What a row (a table row, a chart line) is called. */
  readonly rowLabel: (row: SummaryRow) => string;
}

export const BREAKDOWNS: readonly Breakdown[] = [
  { group: 'alias', label: 'alias', heading: 'Alias', rowLabel: (row) => row.alias ?? '(direct model)' },
  { group: 'key', label: 'key', heading: 'Key', rowLabel: (row) => keyLabel(row.key) },
];

export function breakdownByGroup(group: string): Breakdown {
  return BREAKDOWNS.find((b) => b.group === group) ?? BREAKDOWNS[0]!;
}

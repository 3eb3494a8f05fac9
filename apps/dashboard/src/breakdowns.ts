/**
 * The ways the Overview breaks its traffic down: each is one `group_by` of
 * the usage summary, with what its rows are called. The per-group table, its
 * caption and the charts all follow the chosen one. Both group per request
 * (not per upstream call), so the window's totals read the same under either.
 */
import type { KeyNames } from './keys.js';
import type { SummaryRow } from './types.js';

export interface Breakdown {
  readonly group: 'alias' | 'key';
  /** Singular, lower case: "Per alias", "Requests per key". */
  readonly label: string;
  /** The table's column heading. */
  readonly heading: string;
  /** The group a row is of: an alias, a key id; null for the requests without one. */
  readonly rowId: (row: SummaryRow) => string | null;
  /**
   * What a group (a table row, a chart line) is called. Apart from rowId, so
   * a key's name comes from the keys listing when it is shown, not when the
   * (cached) figures were loaded.
   */
  readonly labelOf: (id: string | null, keys: KeyNames) => string;
}

export const BREAKDOWNS: readonly Breakdown[] = [
  { group: 'alias', label: 'alias', heading: 'Alias', rowId: (row) => row.alias ?? null, labelOf: (id) => id ?? '(direct model)' },
  { group: 'key', label: 'key', heading: 'Key', rowId: (row) => row.key ?? null, labelOf: (id, keys) => keys.label(id) },
];

export function breakdownByGroup(group: string): Breakdown {
  return BREAKDOWNS.find((b) => b.group === group) ?? BREAKDOWNS[0]!;
}

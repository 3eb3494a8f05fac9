/**
 * Where the browser tests put their screenshots. With
 * MANA_LLM_UPDATE_SCREENSHOTS=1 they replace the ones docs/dashboard.md shows
 * (docs/dashboard/*.png, committed); otherwise (CI, a plain test run) they go
 * to a temporary folder, so a run never dirties the checkout: the pages show
 * times and durations that differ on every run.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DOCS_SCREENSHOTS = fileURLToPath(new URL('../../../docs/dashboard/', import.meta.url));

export function screenshotFolder(): string {
  if (process.env.MANA_LLM_UPDATE_SCREENSHOTS === '1') {
    mkdirSync(DOCS_SCREENSHOTS, { recursive: true });
    return DOCS_SCREENSHOTS;
  }
  return mkdtempSync(join(tmpdir(), 'mana-dashboard-shots-'));
}

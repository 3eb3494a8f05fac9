// The operator dashboard held open in a real headless Chromium (Debian's
// `chromium`, driven by the dashboard package's playwright-core), signed in
// and left on the Overview, which polls the gateway every 5 s (health, the
// window summary, the charts' open buckets) — what an operator's open tab
// costs the gateway while the latency rounds run.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './procs.mjs';

const CHROMIUM = process.env.MANA_LLM_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** Why the dashboard cannot be opened here, or undefined when it can. */
export function dashboardUnavailable() {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is missing (apt-get install -y chromium)`;
  if (!existsSync(path.join(repoRoot, 'apps/dashboard/dist/index.html'))) return 'the dashboard is not built';
  return undefined;
}

/** Opens `${url}/ui/`, signs in with `adminKey`, waits for the Overview's figures; counts the API calls it makes from then on. */
export async function openDashboard(url, adminKey) {
  const require = createRequire(path.join(repoRoot, 'apps/dashboard/package.json'));
  const { chromium } = require('playwright-core');
  const profile = mkdtempSync(path.join(os.tmpdir(), 'mana-bench-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1280, height: 860 } });
  const page = browser.pages()[0] ?? (await browser.newPage());
  let calls = 0;
  let since = 0;
  page.on('request', (request) => {
    if (!request.url().includes('/ui/')) calls += 1;
  });
  await page.goto(`${url}/ui/`);
  await page.getByLabel('Admin key').fill(adminKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('.tile dd').first().waitFor({ timeout: 20_000 });
  return {
    /** Starts counting the dashboard's API calls (and the time) from now. */
    startCounting() {
      calls = 0;
      since = Date.now();
    },
    /** API calls per minute since startCounting. */
    callsPerMinute: () => (calls * 60_000) / Math.max(1, Date.now() - since),
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * One headless Chromium per test file: Debian's `chromium` package (installed
 * by `pnpm validate:all` when missing), driven by playwright-core. playwright-core's own
 * browser download is never used (there is no network for it): the binary is
 * passed as `executablePath`. Playwright gives each launch a fresh, temporary
 * profile folder (its own `--user-data-dir`), removed on close.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type ConsoleMessage, type Page } from 'playwright-core';

/** Where Debian's package puts it; MANA_LLM_CHROMIUM points elsewhere. */
export const CHROMIUM_PATH = process.env.MANA_LLM_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Headless, no sandbox (the tests run as root in CI, where Chromium's sandbox
 * refuses to start), and nothing that would reach for the (closed) network:
 * background networking, component updates, sync, first-run.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-default-apps',
  '--disable-extensions',
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} is missing: apt-get install -y chromium (pnpm validate:all does this when it may), or set MANA_LLM_CHROMIUM`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 });
}

export interface Viewer {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Console errors and Content-Security-Policy violations seen so far. */
  readonly problems: string[];
}

/** The CSP violations the current document has seen (see openViewer). */
export function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
}

/** A fresh context (no storage shared with other tests) at laptop size, light scheme, motion reduced. */
export async function openViewer(browser: Browser, viewport = { width: 1280, height: 860 }): Promise<Viewer> {
  const context = await browser.newContext({ viewport, colorScheme: 'light', reducedMotion: 'reduce', locale: 'en-GB', timezoneId: 'UTC' });
  // Counted through the DOM event, whatever the console says: every Content-Security-Policy violation.
  await context.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { cspViolations: string[] }).cspViolations = seen;
    document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.effectiveDirective} ${event.blockedURI}`));
  });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    const text = message.text();
    // The browser logs every non-2xx fetch; a refused key (401/403) or a conflict (412) is an answer the page shows.
    if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of (401|403|412)\b/.test(text)) problems.push(text);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return { context, page, problems };
}

/** Follows a link of the dashboard's navigation, as a person clicks it, and waits for that page's heading. */
export async function openPage(page: Page, label: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Dashboard pages' }).getByRole('link', { name: label, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: label }).waitFor();
}

/**
 * An operator's session in a real browser (headless Chromium) against the
 * real gateway process and fake upstreams, in the order a person would go:
 * sign in, watch a provider die, create an alias with a dead and a live
 * target, send traffic and find the failed-over attempts, reweight, remove a
 * target, lose a race with a hand edit of the file (412) and recover, roll back.
 * Every check reads what the page shows (text, fields, states); the file on
 * disk is read where a change must have reached it.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { closeFakes, providersYaml, refusingPort, startFakes, type Fakes, type GatewayProcess } from '@mana/llm-testkit';
import { cspViolations, launchChromium, openPage, openViewer, type Viewer } from './browser.js';
import { aliasesYaml, chatOnce } from '@mana/llm-testkit';
import { ADMIN_KEY, startGateway } from './gateway.js';

const LIVE_WAIT_MS = 15_000; // pages poll every 5 s; a probe runs every 1 s here

let fakes: Fakes<'ok' | 'flaky'>;
let gw: GatewayProcess;
let browser: Browser;
let viewer: Viewer;
let page: Page;

beforeAll(async () => {
  fakes = await startFakes({ ok: 'openai', flaky: 'openai' });
  const deadPort = await refusingPort();
  const config =
    'settings:\n  probe_interval: 1s\n  failure_threshold: 1\n' +
    'providers:\n' +
    providersYaml(fakes) +
    // Nothing listens here; a high threshold keeps it in the plan, so every request tries it and fails over.
    `  dead: { type: openai, base_url: "http://127.0.0.1:${deadPort}/v1", api_key_required: false, settings: { failure_threshold: 1000 } }\n` +
    // flaky serves an alias of its own (only providers some alias uses are probed).
    aliasesYaml({ 'mana/night': ['flaky/m'] }, ['ok/m']);
  [gw, browser] = await Promise.all([startGateway(config), launchChromium()]);
  viewer = await openViewer(browser);
  page = viewer.page;
});

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await closeFakes(fakes);
});

const configFile = (): Promise<string> => readFile(gw.configPath, 'utf8');
const tile = (label: string) => page.locator('.tile', { hasText: label }).locator('dd');
const aliasCard = (name: string) => page.locator('.alias-card', { has: page.getByRole('heading', { name, exact: true }) });

async function editAlias(name: string): Promise<void> {
  await openPage(page, 'Aliases');
  await page.getByRole('button', { name: `Edit ${name}` }).click();
  await page.getByRole('heading', { name: `Edit ${name}` }).waitFor();
}

async function save(): Promise<void> {
  await page.getByRole('button', { name: 'Save' }).click();
}

/** Waits for the "Saved" notice; if it does not come, fails with what the page shows instead (a conflict, a field error). */
async function saved(name: string): Promise<void> {
  try {
    await page.getByRole('status').filter({ hasText: `Saved ${name}.` }).waitFor();
  } catch (error) {
    throw new Error(`no "Saved ${name}." notice; the page shows: ${(await page.locator('main').innerText()).slice(0, 1500)}`, { cause: error });
  }
}

describe('the operator dashboard in a browser', () => {
  it('signs in with the admin key, kept in this tab only, and refuses a wrong one', async () => {
    await page.goto(`${gw.url}/ui/`);
    await page.getByLabel('Admin key').fill('not-the-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Invalid admin key');

    await page.getByLabel('Admin key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const storage = await page.evaluate(() => ({ session: sessionStorage.length, local: localStorage.length, cookies: document.cookie }));
    expect(storage).toEqual({ session: 1, local: 0, cookies: '' });

    // A reload keeps the session; signing out forgets the key.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.getByLabel('Admin key').fill(ADMIN_KEY);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  });

  it('shows a provider turn unhealthy on the Overview by itself, without a reload', async () => {
    const flakyRow = page.locator('.provider-list li[data-provider="flaky"]');
    await expect.poll(() => flakyRow.textContent(), { timeout: LIVE_WAIT_MS }).toContain('healthy');
    expect(await flakyRow.textContent()).not.toContain('unhealthy');
    await page.evaluate(() => ((window as unknown as { stillTheSamePage: boolean }).stillTheSamePage = true));

    await fakes.flaky.stop(); // the process behind the provider dies

    await expect.poll(() => flakyRow.textContent(), { timeout: LIVE_WAIT_MS }).toContain('unhealthy');
    // The last error, next to the state: refused, or reset when a probe was in flight as the process died.
    expect(await flakyRow.textContent()).toMatch(/probe failed: .*(refused|ECONNREFUSED|ECONNRESET)/i);
    expect(await page.evaluate(() => (window as unknown as { stillTheSamePage?: boolean }).stillTheSamePage)).toBe(true);
    expect(await page.locator('.top .badge').textContent()).toBe('degraded');
  });

  it('creates an alias with a dead and a live target; the strategy select appears with the second target', async () => {
    await openPage(page, 'Aliases');
    await page.getByRole('button', { name: 'New alias' }).click();
    await page.getByLabel('Name').fill('mana/team');
    await page.getByLabel('Description').fill('Team chat');
    await page.getByLabel('Provider').selectOption('dead');
    await page.getByLabel('Model').fill('m');
    await page.getByRole('button', { name: 'Add target' }).click();
    expect(await page.getByLabel('Strategy').count()).toBe(0); // one target: no strategy to choose
    await page.getByLabel('Provider').selectOption('ok');
    await page.getByLabel('Model').fill('m');
    await page.getByRole('button', { name: 'Add target' }).click();
    expect(await page.getByLabel('Strategy').inputValue()).toBe('failover');
    await save();

    await saved('mana/team');
    const card = aliasCard('mana/team');
    await expect.poll(() => card.textContent()).toContain('failover');
    const chain = await card.locator('.chain li').allTextContents();
    expect(chain.map((line) => line.split(' ')[0])).toEqual(['dead/m', 'ok/m']);
    expect(chain[1]).toContain('healthy');
    expect(await configFile()).toMatch(/mana\/team:[\s\S]*dead\/m[\s\S]*ok\/m/);
  });

  it('shows the requests with their failed-over attempt flagged, and the rescued count on the Overview going up', async () => {
    await openPage(page, 'Overview');
    await page.getByLabel('Window').selectOption('15m');
    await expect.poll(() => tile('Rescued by failover').textContent(), { timeout: LIVE_WAIT_MS }).toBe('0');

    for (let i = 0; i < 3; i += 1) expect((await chatOnce(gw.url, 'mana/team')).status).toBe(200);

    // No reload: the Overview refreshes itself.
    await expect.poll(() => tile('Rescued by failover').textContent(), { timeout: LIVE_WAIT_MS }).toBe('3');
    await expect.poll(() => page.getByRole('table', { name: 'Per alias, last 15 min', exact: true }).locator('tr', { hasText: 'mana/team' }).textContent()).toMatch(/mana\/team\s*3\s*3\s*3/);

    await openPage(page, 'Requests');
    await page.getByLabel('Alias').selectOption('mana/team');
    await page.getByLabel('Failed over').selectOption('true');
    const rows = page.locator('tr.request-row');
    await expect.poll(() => rows.count(), { timeout: LIVE_WAIT_MS }).toBe(3);
    const first = rows.first();
    expect(await first.textContent()).toContain('ok/m'); // answered by the live target
    expect(await first.textContent()).toContain('rescued');
    await first.getByRole('button', { name: /Show attempts/ }).click();
    expect(await first.getByRole('button', { name: /Hide attempts/ }).getAttribute('aria-expanded')).toBe('true');
    const attempts = page.locator('table.attempts tbody tr');
    expect(await attempts.count()).toBe(2);
    const [failed, answered] = await attempts.allTextContents();
    expect(failed).toContain('dead/m');
    expect(failed).toContain('failed over');
    expect(failed).toMatch(/connect_refused|connection/);
    expect(answered).toContain('ok/m');
    expect(answered).toContain('ok');
    expect(answered).not.toContain('failed over');

    // The other filter value: no request of mana/team went without a failover.
    await page.getByLabel('Failed over').selectOption('false');
    await page.getByText('No requests match.').waitFor();
  });

  it('switches the strategy to weighted and sets weights', async () => {
    await editAlias('mana/team');
    expect(await page.getByLabel('Weight of ok/m').count()).toBe(0); // failover: no weights to set
    await page.getByLabel('Strategy').selectOption('weighted');
    await page.getByLabel('Weight of dead/m').fill('1');
    await page.getByLabel('Weight of ok/m').fill('0');
    await save();
    // Refused next to the weights, before anything is sent.
    expect(await page.locator('#weights-error').textContent()).toBe('The weight of ok/m must be a positive number.');
    await page.getByLabel('Weight of ok/m').fill('4');
    await save();

    await saved('mana/team');
    const card = aliasCard('mana/team');
    await expect.poll(() => card.textContent()).toContain('weighted');
    expect(await card.locator('.chain li').nth(1).textContent()).toContain('weight 4');
    expect(await configFile()).toMatch(/strategy: weighted[\s\S]*weight: 4/);
  });

  it('reorders targets with the move buttons', async () => {
    await editAlias('mana/team');
    await page.getByRole('button', { name: 'Move ok/m up' }).click();
    expect(await page.locator('.target-row .target-name').allTextContents()).toEqual(['ok/m', 'dead/m']);
    expect(await page.getByRole('button', { name: 'Move ok/m up' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Move ok/m down' }).click();
    expect(await page.locator('.target-row .target-name').allTextContents()).toEqual(['dead/m', 'ok/m']);
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  it('removes a target: the strategy select disappears, and the alias is left with one target', async () => {
    await editAlias('mana/team');
    expect(await page.getByLabel('Strategy').count()).toBe(1);
    await page.getByRole('button', { name: 'Remove dead/m' }).click();
    expect(await page.getByLabel('Strategy').count()).toBe(0);
    expect(await page.getByLabel('Weight of ok/m').count()).toBe(0);
    await save();

    await saved('mana/team');
    const card = aliasCard('mana/team');
    await expect.poll(() => card.textContent()).toContain('one target');
    expect(await card.locator('.chain li').allTextContents()).toHaveLength(1);
    const file = await configFile();
    expect(file).not.toContain('dead/m');
    expect(file.slice(file.indexOf('mana/team:'))).not.toContain('strategy');
  });

  it('shows a 412 when the file was edited underneath, then reloads and saves', async () => {
    await editAlias('mana/team');
    await gw.writeConfig((await configFile()).replace('Team chat', 'Edited by hand'));
    await page.getByLabel('Description').fill('From the dashboard');
    await save();

    const conflict = page.locator('.conflict');
    await conflict.waitFor();
    expect(await conflict.getAttribute('role')).toBe('alert');
    expect(await conflict.textContent()).toContain('The config changed since this form was opened');
    expect(await configFile()).toContain('Edited by hand'); // nothing was overwritten

    await page.getByRole('button', { name: 'Reload the current version' }).click();
    await expect.poll(() => page.getByLabel('Description').inputValue()).toBe('Edited by hand');
    expect(await conflict.count()).toBe(0);
    await page.getByLabel('Description').fill('From the dashboard');
    await save();
    await saved('mana/team');
    expect(await configFile()).toContain('From the dashboard');
    await expect.poll(() => aliasCard('mana/team').textContent()).toContain('From the dashboard');
  });

  it('rolls back to an earlier config version, shown with its diff', async () => {
    await openPage(page, 'Config history');
    const versions = page.getByRole('list', { name: 'Applied config versions, newest first' }).locator('li');
    // startup, created, weighted, one target, description: newest first.
    await expect.poll(() => versions.count()).toBe(5);
    expect(await versions.first().textContent()).toContain('current');
    await versions.nth(2).getByRole('button').click(); // the weighted version
    const diff = page.getByLabel('Changes against the previous version');
    await diff.waitFor();
    const lines = async (kind: string) => (await diff.locator(kind).allTextContents()).map((line) => line.trimEnd());
    expect(await lines('.diff-add')).toEqual(expect.arrayContaining([expect.stringMatching(/^\+\s+strategy: weighted$/), expect.stringMatching(/^\+\s+weight: 4$/)]));
    expect(await lines('.diff-del')).toEqual(expect.arrayContaining([expect.stringMatching(/^-\s+strategy: failover$/)]));

    await page.getByRole('button', { name: 'Roll back to this version' }).click();
    await page.getByRole('status').filter({ hasText: 'Rolled back to' }).waitFor();
    await expect.poll(() => versions.count()).toBe(6);
    expect(await versions.first().textContent()).toMatch(/rollback[\s\S]*current/);
    expect(await configFile()).toMatch(/strategy: weighted[\s\S]*weight: 4/);

    await openPage(page, 'Aliases');
    const card = aliasCard('mana/team');
    await expect.poll(() => card.textContent()).toContain('weighted');
    expect(await card.locator('.chain li').count()).toBe(2);
  });

  it('logged no console error and no Content-Security-Policy violation on the way; the policy is enforced', async () => {
    expect(viewer.problems).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);
    // The policy is real: an inline script or style someone injected is refused by the browser.
    const ran = await page.evaluate(() => {
      const script = document.createElement('script');
      script.textContent = 'window.inlineRan = true';
      document.body.append(script);
      const style = document.createElement('style');
      style.textContent = 'body { display: none }';
      document.head.append(style);
      return (window as unknown as { inlineRan?: boolean }).inlineRan === true;
    });
    expect(ran).toBe(false);
    await expect.poll(() => cspViolations(page)).toEqual(expect.arrayContaining([expect.stringMatching(/^script-src-elem /), expect.stringMatching(/^style-src-elem /)]));
    expect(await page.getByRole('heading', { level: 1 }).isVisible()).toBe(true);
  });
});

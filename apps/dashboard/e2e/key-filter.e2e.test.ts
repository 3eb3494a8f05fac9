/**
 * Who called, in the dashboard: a real gateway process with two static keys
 * (MANA_LLM_API_KEYS, so `env-1` and `env-2`), a few requests with each (some
 * failing upstream) and one with a wrong key, then in a real browser: the
 * Requests and Errors pages' key filter narrows each list to that key's
 * requests, the rows name their key, and the Overview broken down by key
 * shows each key's requests and errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { aliasesYaml, closeFakes, providersYaml, startFakes, waitUntil, type Fakes, type GatewayProcess } from '@mana/llm-testkit';
import { cspViolations, launchChromium, openPage, openViewer, type Viewer } from './browser.js';
import { ADMIN_KEY, startGateway } from './gateway.js';

const KEYS = { 'env-1': 'sk-dashboard-key-one-5c2e9a', 'env-2': 'sk-dashboard-key-two-d81f07' } as const;
const WRONG_KEY = 'sk-dashboard-key-wrong-000000';
/** What each key sends: answered requests, and requests its upstream refuses (400). */
const TRAFFIC = { 'env-1': { ok: 3, failing: 1 }, 'env-2': { ok: 2, failing: 2 } } as const;
type KeyId = keyof typeof KEYS;
const KEY_IDS = Object.keys(KEYS) as KeyId[];
const TOTAL = KEY_IDS.reduce((n, id) => n + TRAFFIC[id].ok + TRAFFIC[id].failing, 0) + 1; // + the wrong key's

let fakes: Fakes<'cloud'>;
let gw: GatewayProcess;
let browser: Browser;
let viewer: Viewer;
let page: Page;

/** The key select (by role: getByLabel would read the label's text with its options, "Keyanyenv-1…"). */
const keyFilter = () => page.getByRole('combobox', { name: 'Key', exact: true });

async function chat(apiKey: string, model: string): Promise<number> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.text();
  return res.status;
}

async function storedCount(): Promise<number> {
  const res = await fetch(`${gw.url}/admin/usage/requests?limit=500`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  return ((await res.json()) as { data: unknown[] }).data.length;
}

beforeAll(async () => {
  fakes = await startFakes({ cloud: 'openai' });
  fakes.cloud.on('broken', { kind: 'status', status: 400 });
  const config =
    // The refused requests must not cool the provider down for the answered ones.
    'settings:\n  failure_threshold: 1000\n' + 'providers:\n' + providersYaml(fakes) + aliasesYaml({ 'mana/fragile': ['cloud/broken'] }, ['cloud/m']);
  [gw, browser] = await Promise.all([startGateway(config, { MANA_LLM_API_KEYS: Object.values(KEYS).join(',') }), launchChromium()]);
  for (const id of KEY_IDS) {
    for (let i = 0; i < TRAFFIC[id].ok; i += 1) expect(await chat(KEYS[id], 'mana/fast-text')).toBe(200);
    for (let i = 0; i < TRAFFIC[id].failing; i += 1) expect(await chat(KEYS[id], 'mana/fragile')).toBe(400);
  }
  expect(await chat(WRONG_KEY, 'mana/fast-text')).toBe(401);
  // The usage store writes in ~1 s batches: wait until every request is stored.
  await waitUntil('every request in the usage store', async () => (await storedCount()) === TOTAL);
  viewer = await openViewer(browser);
  page = viewer.page;
  // Signed in once for every test below (the sign-in itself is tested in operator-flow).
  await page.goto(`${gw.url}/ui/`);
  await page.getByLabel('Admin key').fill(ADMIN_KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
});

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await closeFakes(fakes);
});

describe('the key filter and the by-key breakdown in a browser', () => {
  it('Requests: every row names its key, and the key filter keeps only that key’s requests', async () => {
    await openPage(page, 'Requests');
    const rows = page.locator('tr.request-row');
    // Time, Alias / model, Key, …
    const keyCells = () => rows.locator('td:nth-child(3)').allTextContents();
    await expect.poll(() => rows.count()).toBe(TOTAL);
    expect((await keyCells()).sort()).toEqual([...KEY_IDS.flatMap((id) => Array<string>(TRAFFIC[id].ok + TRAFFIC[id].failing).fill(id)), '–'].sort());

    const filter = keyFilter();
    await expect.poll(() => filter.locator('option').allTextContents()).toEqual(['any', ...KEY_IDS]);
    for (const id of KEY_IDS) {
      await filter.selectOption(id);
      // Both keys made as many requests: the rows' keys, not their count, tell the new list from the old.
      await expect.poll(keyCells).toEqual(Array<string>(TRAFFIC[id].ok + TRAFFIC[id].failing).fill(id));
    }
    await filter.selectOption('');
    await expect.poll(() => rows.count()).toBe(TOTAL);
  });

  it('Errors: the groups name their keys, and the key filter counts only that key’s errors', async () => {
    await openPage(page, 'Errors');
    const groups = page.locator('tbody tr');
    const fragile = groups.filter({ hasText: 'cloud/broken' });
    // Target, Reason, Kind, Count, Last seen, Aliases, Keys
    const cells = () => fragile.locator('th, td').allTextContents();
    await expect.poll(() => fragile.count()).toBe(1);
    expect((await cells())[3]).toBe(String(TRAFFIC['env-1'].failing + TRAFFIC['env-2'].failing));
    expect((await cells())[6]!.split(', ').sort()).toEqual(KEY_IDS);
    // The wrong key's 401 is an error of no key.
    expect(await groups.count()).toBe(2);

    const filter = keyFilter();
    for (const id of KEY_IDS) {
      await filter.selectOption(id);
      await expect.poll(async () => (await cells())[6]).toBe(id);
      expect((await cells())[3]).toBe(String(TRAFFIC[id].failing));
      expect((await cells())[5]).toBe('mana/fragile');
      expect(await groups.count()).toBe(1);
      expect(await page.getByText(`with an error made with ${id} in the last 24 h`).count()).toBe(1);
    }
  });

  it('Overview: broken down by key, each key’s requests and errors, in the table and the charts', async () => {
    await openPage(page, 'Overview');
    await page.getByLabel('Window').selectOption('1h');
    await page.getByLabel('Break down by').selectOption('key');
    const table = page.getByRole('table', { name: 'Per key, last 1 h', exact: true });
    const rowFigures = async (): Promise<Record<string, [string, string]>> => {
      const figures: Record<string, [string, string]> = {};
      for (const row of await table.locator('tbody tr').all()) {
        const [name, requests, errors] = await row.locator('th, td').allTextContents();
        figures[name!] = [requests!, errors!];
      }
      return figures;
    };
    await expect
      .poll(rowFigures)
      .toEqual({
        'env-1': [String(TRAFFIC['env-1'].ok + TRAFFIC['env-1'].failing), String(TRAFFIC['env-1'].failing)],
        'env-2': [String(TRAFFIC['env-2'].ok + TRAFFIC['env-2'].failing), String(TRAFFIC['env-2'].failing)],
        '(no key)': ['1', '1'],
      });
    expect(await page.getByRole('columnheader', { name: 'Key', exact: true }).count()).toBe(1);
    const tile = page.locator('.tile').filter({ has: page.getByText('Requests', { exact: true }) }).locator('dd');
    expect(await tile.textContent()).toBe(String(TOTAL));
    await page.locator('.chart canvas').first().waitFor();
    expect(await page.getByRole('figure').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('Requests per key, last 1 h')]));
    // The chart's text table has one column per key.
    const chartTable = page.getByRole('table', { name: 'Requests per key, last 1 h', exact: true });
    expect(await chartTable.locator('thead th').allTextContents()).toEqual(expect.arrayContaining(['env-1', 'env-2', '(no key)']));

    // Back to aliases: the same totals, per alias.
    await page.getByLabel('Break down by').selectOption('alias');
    await page.getByRole('table', { name: 'Per alias, last 1 h', exact: true }).waitFor();
    expect(await tile.textContent()).toBe(String(TOTAL));
  });

  it('logged no console error and no Content-Security-Policy violation, and shows no key', async () => {
    expect(viewer.problems).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);
    const text = await page.content();
    for (const secret of [...Object.values(KEYS), WRONG_KEY]) expect(text).not.toContain(secret);
  });
});

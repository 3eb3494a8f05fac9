/**
 * The Keys page in a real browser, against the built gateway (one static key
 * in MANA_LLM_API_KEYS, so auth is on and `env-1` is listed read-only): a
 * service key is created in the page, its secret read from the page (and
 * from the clipboard after Copy) and used with the official openai SDK; its
 * last use appears after a reload; a rotation with a grace keeps the old
 * secret working beside the new one; a disabled key is refused (401) and an
 * enabled one served again; a deleted key is gone from the list and refused.
 * The form refuses what the API refuses, with the API's words; a description
 * holding HTML is shown as text; the secret is nowhere (page, storage, URL)
 * once dismissed.
 */
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { aliasesYaml, closeFakes, providersYaml, startFakes, waitUntil, type Fakes, type GatewayProcess } from '@mana/llm-testkit';
import { cspViolations, launchChromium, openPage, openViewer, type Viewer } from './browser.js';
import { ADMIN_KEY, startGateway } from './gateway.js';
import { screenshotFolder } from './screenshots.js';

const STATIC_KEY = 'sk-dashboard-keys-page-static-7d1c';
const NAME = 'import-job';
/** HTML and an ampersand: to be shown as these characters, not as markup. */
const DESCRIPTION = 'Nightly <b>x</b> & <script>document.title="owned"</script> import';
const SERVICE_KEY = /^mk-[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/;

let fakes: Fakes<'cloud'>;
let gw: GatewayProcess;
let browser: Browser;
let viewer: Viewer;
let page: Page;
/** Every secret the page showed, for the checks that none stays behind. */
const secrets: string[] = [];

/** One chat completion with `apiKey` through the official SDK: its status (200, or the refusal's). */
async function chatStatus(apiKey: string): Promise<number> {
  const client = new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  try {
    const completion = await client.chat.completions.create({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0]?.message.content).toEqual(expect.any(String));
    return 200;
  } catch (error) {
    if (error instanceof OpenAI.APIError && error.status !== undefined) return error.status;
    throw error;
  }
}

async function adminApi(method: string, path: string, body?: unknown): Promise<{ status: number; body: { error?: { code: string; message: string; param: string | null } } & Record<string, unknown> }> {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as never };
}

const keyRow = (name: string): Locator => page.locator('table.keys tbody tr').filter({ has: page.getByRole('rowheader', { name: new RegExp(`^${name}\\b`) }) });
/** The row's cells by heading: Name, Id, Description, Created, Last use, Expires, State, Allowed aliases, Priority, Max concurrency. */
async function rowCells(name: string): Promise<Record<string, string>> {
  const headings = await page.locator('table.keys thead th').allTextContents();
  const cells = await keyRow(name).locator('th, td').allTextContents();
  return Object.fromEntries(headings.map((heading, i) => [heading, cells[i]!]));
}

/** The secret the page shows once, checked for the format and the copy button. */
async function readShownSecret(): Promise<string> {
  const field = page.getByLabel('The new key');
  const secret = await field.inputValue();
  expect(secret).toMatch(SERVICE_KEY);
  secrets.push(secret);
  expect(await page.getByText('This key is shown once.').count()).toBe(1);
  await page.getByRole('button', { name: 'Copy', exact: true }).click();
  await page.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
  return secret;
}

async function dismissSecret(): Promise<void> {
  await page.getByRole('button', { name: 'Done: I have copied it' }).click();
  await page.getByLabel('The new key').waitFor({ state: 'detached' });
}

beforeAll(async () => {
  fakes = await startFakes({ cloud: 'openai' });
  const config = 'providers:\n' + providersYaml(fakes) + aliasesYaml({}, ['cloud/m']);
  [gw, browser] = await Promise.all([startGateway(config, { MANA_LLM_API_KEYS: STATIC_KEY }), launchChromium()]);
  viewer = await openViewer(browser);
  page = viewer.page;
  await viewer.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
});

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await closeFakes(fakes);
});

describe('the Keys page in a browser', () => {
  it('signs in and lists the MANA_LLM_API_KEYS key as read-only env-1', async () => {
    await page.goto(`${gw.url}/ui/`);
    await page.getByLabel('Admin key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await openPage(page, 'Keys');
    await keyRow('env-1').waitFor();
    const env1 = await rowCells('env-1');
    expect(env1.Name).toBe('env-1 read-only');
    expect(env1.Id).toBe('env-1');
    expect(env1.Description).toBe('Key 1 of MANA_LLM_API_KEYS.');
    expect(env1.State).toBe('active');
    expect(await keyRow('env-1').getByRole('button').count()).toBe(0);
    expect(await keyRow('env-1').getByText('set by MANA_LLM_API_KEYS').count()).toBe(1);
  });

  it('the form refuses what the API refuses, in the API’s words, at the field', async () => {
    await page.getByRole('button', { name: 'New key' }).click();
    const name = page.getByLabel('Name', { exact: true });
    await name.waitFor();
    // Every control of the page and the form has a name a screen reader reads out.
    const unnamed = await page.evaluate(() =>
      [...document.querySelectorAll('main input, main select, main textarea, main button')]
        .filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.getAttribute('aria-label') && (el.textContent ?? '').trim() === '')
        .map((el) => el.outerHTML),
    );
    expect(unnamed).toEqual([]);
    const create = page.getByRole('button', { name: 'Create key' });

    // Checked in the page, by the API's own field rules: the same message the API answers.
    const cases = [
      { fill: () => name.fill('Import Job'), field: name, body: { name: 'Import Job' } },
      { fill: () => page.getByLabel('Description').fill('two\nlines'), field: page.getByLabel('Description'), body: { name: NAME, description: 'two\nlines' } },
      { fill: () => page.getByLabel('Max concurrency').fill('0'), field: page.getByLabel('Max concurrency'), body: { name: NAME, max_concurrency: 0 } },
    ];
    for (const c of cases) {
      await c.fill();
      if (c.field !== name) await name.fill(NAME);
      await create.click();
      const api = await adminApi('POST', '/admin/keys', c.body);
      expect(api.status).toBe(400);
      expect(api.body.error?.code).toBe('invalid_key_field');
      await expect.poll(() => c.field.getAttribute('aria-invalid')).toBe('true');
      expect(await page.getByRole('alert').allTextContents()).toEqual([api.body.error!.message]);
      await c.field.fill('');
    }
    // What only the gateway knows comes back from it, at its field.
    await name.fill(NAME);
    await page.getByLabel('Allowed aliases').fill('mana/no-such-alias');
    await create.click();
    await page.getByRole('alert').filter({ hasText: 'mana/no-such-alias' }).waitFor();
    expect(await page.getByLabel('Allowed aliases').getAttribute('aria-invalid')).toBe('true');
    // Nothing was created by the refused tries (env-1 only).
    expect(((await adminApi('GET', '/admin/keys')).body.data as unknown[]).length).toBe(1);
  });

  it('creates a key: the secret is shown once, with a copy button, and works with the openai SDK', async () => {
    await page.getByLabel('Description').fill(DESCRIPTION);
    await page.getByLabel('Expires').fill('2031-05-06T07:08'); // the browser's time zone: UTC (see openViewer)
    await page.getByLabel('Allowed aliases').fill('mana/fast-text, mana/long-form');
    await page.getByLabel('Priority').selectOption('background');
    await page.getByLabel('Max concurrency').fill('4');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: `Key ${NAME} created` }).waitFor();
    const secret = await readShownSecret();
    expect(await chatStatus(secret)).toBe(200);
  });

  it('once dismissed, the secret is gone from the page, the storage and the URL', async () => {
    await dismissSecret();
    const left = await page.evaluate(() => ({
      html: document.documentElement.outerHTML,
      url: location.href,
      local: JSON.stringify({ ...localStorage }),
      session: JSON.stringify({ ...sessionStorage }),
    }));
    for (const text of Object.values(left)) expect(text).not.toContain(secrets[0]);
    expect(await page.title()).toBe('Mana LLM gateway');
  });

  it('lists the key with its settings and the description as text; its last use appears after a reload', async () => {
    await keyRow(NAME).waitFor();
    const cells = await rowCells(NAME);
    expect(cells).toMatchObject({
      Id: secrets[0]!.slice(3, 15),
      Description: DESCRIPTION,
      Expires: 'May 6, 2031, 07:08',
      State: 'active',
      'Allowed aliases': 'mana/fast-text, mana/long-form',
      Priority: 'background',
      'Max concurrency': '4',
    });
    expect(cells.Created).not.toBe('–');
    expect((await adminApi('GET', `/admin/keys/${cells.Id}`)).body.expires_at).toBe('2031-05-06T07:08:00.000Z');
    // Listed right after the create, before its first request.
    expect(cells['Last use']).toBe('never');
    // Characters, not markup: no element came out of the description.
    expect(await keyRow(NAME).locator('td b, td script').count()).toBe(0);
    // The list only: a picture of the page never holds a secret.
    await page.screenshot({ path: join(screenshotFolder(), 'keys.png'), animations: 'disabled', caret: 'hide', fullPage: true });
    // At a phone's width the table scrolls inside its box; the page does not scroll sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 860 });
    // Uses are written in the background (every 10 s): a reload shows it once written.
    await expect
      .poll(
        async () => {
          await page.reload();
          await keyRow(NAME).waitFor();
          return (await rowCells(NAME))['Last use'];
        },
        { timeout: 40_000, interval: 2_000 },
      )
      .toMatch(/^\d\d:\d\d:\d\d$/);
  });

  it('the key filter of Requests and the Overview by key name the key from the listing', async () => {
    // The usage store writes in ~1 s batches, and the page reads once per filter change.
    await waitUntil('the key’s request in the usage store', async () => ((await adminApi('GET', '/admin/usage/requests?limit=10')).body.data as unknown[]).length === 1);
    await openPage(page, 'Requests');
    const filter = page.getByRole('combobox', { name: 'Key', exact: true });
    await expect.poll(() => filter.locator('option').allTextContents()).toEqual(['any', 'env-1', NAME]);
    await filter.selectOption({ label: NAME });
    await expect.poll(() => page.locator('tr.request-row td:nth-child(3)').allTextContents()).toEqual([NAME]);

    // A summary by key carries only the id: the row and the chart line are named from the listing.
    await openPage(page, 'Overview');
    await page.getByLabel('Break down by').selectOption('key');
    const table = page.getByRole('table', { name: 'Per key, last 1 h', exact: true });
    await expect.poll(() => table.locator('tbody th').allTextContents()).toEqual([NAME]);
    const chartTable = page.getByRole('table', { name: 'Requests per key, last 1 h', exact: true });
    await expect.poll(() => chartTable.locator('thead th').allTextContents()).toEqual(['time', NAME]);
    await openPage(page, 'Keys');
  });

  it('rotates with a grace: the new secret is shown once, and the old one keeps working beside it', async () => {
    await keyRow(NAME).getByRole('button', { name: `Rotate ${NAME}` }).click();
    const dialog = page.getByRole('dialog', { name: `Rotate key ${NAME}?` });
    await dialog.getByLabel('Grace for the old key').selectOption('1h');
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    await page.getByRole('heading', { name: `New key for ${NAME}` }).waitFor();
    expect(await page.getByText(/The old key keeps working until .* \(in (60 min|1 h)\)\./).count()).toBe(1);
    const rotated = await readShownSecret();
    expect(rotated).not.toBe(secrets[0]);
    expect(rotated.slice(0, 15)).toBe(secrets[0]!.slice(0, 15)); // the same id
    expect(await chatStatus(rotated)).toBe(200);
    expect(await chatStatus(secrets[0]!)).toBe(200);
    await dismissSecret();
    await expect.poll(async () => (await rowCells(NAME)).State).toMatch(/^active old key valid until /);
  });

  it('disables the key (both secrets refused, 401) and enables it again', async () => {
    await keyRow(NAME).getByRole('button', { name: `Disable ${NAME}` }).click();
    await page.getByRole('status').filter({ hasText: `Disabled ${NAME}` }).waitFor();
    await expect.poll(async () => (await rowCells(NAME)).State).toMatch(/^disabled/);
    expect(await chatStatus(secrets[1]!)).toBe(401);
    expect(await chatStatus(secrets[0]!)).toBe(401);

    await keyRow(NAME).getByRole('button', { name: `Enable ${NAME}` }).click();
    await expect.poll(async () => (await rowCells(NAME)).State).toMatch(/^active/);
    expect(await chatStatus(secrets[1]!)).toBe(200);
  });

  it('deletes the key only after a confirmation; then it is gone from the list and refused', async () => {
    const dialog = page.getByRole('dialog', { name: `Delete key ${NAME}?` });
    // Escape and Cancel both leave the key as it was.
    await keyRow(NAME).getByRole('button', { name: `Delete ${NAME}` }).click();
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await keyRow(NAME).getByRole('button', { name: `Delete ${NAME}` }).click();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await keyRow(NAME).count()).toBe(1);
    expect(await chatStatus(secrets[1]!)).toBe(200);

    await keyRow(NAME).getByRole('button', { name: `Delete ${NAME}` }).click();
    await dialog.getByRole('button', { name: 'Delete key' }).click();
    await page.getByRole('status').filter({ hasText: `Deleted ${NAME}` }).waitFor();
    await expect.poll(() => keyRow(NAME).count()).toBe(0);
    expect(await keyRow('env-1').count()).toBe(1);
    expect(await chatStatus(secrets[1]!)).toBe(401);
    expect((await adminApi('GET', '/admin/keys')).body.data).toHaveLength(1);

    // Its requests stay in the usage records: the key filter still offers it, by its id.
    await openPage(page, 'Requests');
    const filter = page.getByRole('combobox', { name: 'Key', exact: true });
    await expect.poll(() => filter.locator('option').allTextContents()).toEqual(['any', 'env-1', secrets[0]!.slice(3, 15)]);
  });

  it('logged no console error and no Content-Security-Policy violation, and kept no secret', async () => {
    // The one refusal the page asked for (the unknown alias, shown at its field) is the only line the browser logged.
    expect(viewer.problems).toEqual([expect.stringMatching(/^Failed to load resource: the server responded with a status of 400\b/)]);
    expect(await cspViolations(page)).toEqual([]);
    const left = await page.evaluate(() => [document.documentElement.outerHTML, location.href, JSON.stringify({ ...localStorage }), JSON.stringify({ ...sessionStorage })].join('\n'));
    expect(secrets).toHaveLength(2);
    for (const secret of secrets) expect(left).not.toContain(secret);
    expect(left).not.toContain(STATIC_KEY);
  });
});

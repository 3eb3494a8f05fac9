/**
 * Every page of the dashboard on seeded fake traffic, in a real browser:
 * what each page shows (providers without their keys, errors grouped by
 * target and reason, config history with diffs, probe now), that it works
 * with the keyboard alone, names every control for a screen reader, and fits
 * a phone's width. Each page is also photographed for docs/dashboard.md (see
 * screenshots.ts for where the pictures go).
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { chatOnce, refusingPort, startFakeOllama, startFakeOpenAI, waitUntil, type FakeUpstream, type GatewayProcess } from '@mana/llm-testkit';
import { cspViolations, launchChromium, openPage, openViewer, type Viewer } from './browser.js';
import { ADMIN_KEY, startGateway } from './gateway.js';
import { DOCS_SCREENSHOTS, screenshotFolder } from './screenshots.js';

const GROQ_KEY = 'sk-groq-dashboard-e2e-never-shown-77x';
const TOGETHER_KEY = 'sk-together-dashboard-e2e-never-shown-21q';
/** Failures seeded on the local model: each fails over to groq (rescued). */
const LOCAL_FAILURES = 4;

let ollama: FakeUpstream;
let groq: FakeUpstream;
let gw: GatewayProcess;
let browser: Browser;
let viewer: Viewer;
let page: Page;
let shots: string;

function config(togetherPort: number): string {
  return `# Seeded for the dashboard's screenshots
settings:
  probe_interval: 30s
providers:
  # Its seeded 500s must each be tried (and fail over), not cooled down or counted as an outage.
  ollama: { type: ollama, base_url: "${ollama.url}", max_concurrency: 4, settings: { rate_limit_cooldown: 0s, failure_threshold: 10 } }
  groq: { base_url: "${groq.baseUrl}", api_key: "\${GROQ_API_KEY}", price: { input: 0.05, output: 0.08 } }
  together: { base_url: "http://127.0.0.1:${togetherPort}/v1", api_key: "\${TOGETHER_API_KEY}" }
aliases:
  mana/fast-text:
    description: "Short answers, local first"
    strategy: failover
    chain: [ollama/gemma3:4b, groq/llama-3.1-8b-instant]
  mana/long-form:
    description: "Long prose"
    strategy: failover
    chain: [together/meta-llama/Llama-3.3-70B-Instruct-Turbo, groq/llama-3.3-70b-versatile]
  mana/structured:
    description: "JSON answers"
    chain: [groq/llama-3.3-70b-versatile]
  mana/reasoning:
    description: "Step-by-step reasoning"
    strategy: failover
    chain: [openrouter/deepseek/deepseek-r1, groq/llama-3.3-70b-versatile]
  mana/vision:
    description: "Images in, text out"
    chain: [ollama/gemma3:12b]
  mana/embed:
    description: "Embeddings"
    kind: embedding
    embedding_space: nomic-v1.5
    chain: [ollama/nomic-embed-text:v1.5]
`;
}

async function seedTraffic(): Promise<number> {
  let sent = 0;
  const send = async (model: string, times: number): Promise<void> => {
    for (let i = 0; i < times; i += 1) {
      await chatOnce(gw.url, model);
      sent += 1;
    }
  };
  ollama.on('gemma3:4b', [...Array.from({ length: LOCAL_FAILURES }, () => ({ kind: 'status' as const, status: 500 })), { kind: 'answer', usage: { prompt_tokens: 40, completion_tokens: 90 } }]);
  groq.on('llama-3.3-70b-versatile', [{ kind: 'answer', usage: { prompt_tokens: 300, completion_tokens: 800 } }, { kind: 'status', status: 429, headers: { 'retry-after': '1' } }, { kind: 'answer', usage: { prompt_tokens: 300, completion_tokens: 800 } }]);
  await send('mana/fast-text', 12);
  await send('mana/long-form', 5);
  await send('mana/structured', 3);
  await send('mana/reasoning', 3);
  await send('mana/vision', 4);
  // One stream, so its target has a time to first token to show.
  const streamed = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mana/vision', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(streamed.status).toBe(200);
  await streamed.text();
  return sent + 1;
}

async function admin(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${gw.url}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json', ...init.headers } });
}

beforeAll(async () => {
  ollama = await startFakeOllama({ name: 'local', models: ['gemma3:4b', 'gemma3:12b', 'nomic-embed-text:v1.5'] });
  groq = await startFakeOpenAI({ name: 'groq' });
  [gw, browser] = await Promise.all([
    startGateway(config(await refusingPort()), { GROQ_API_KEY: GROQ_KEY, TOGETHER_API_KEY: TOGETHER_KEY }),
    launchChromium(),
  ]);
  const sent = await seedTraffic();
  // One admin edit, so the history has a diff to show.
  const patch = await admin('/admin/aliases/mana/fast-text', {
    method: 'PATCH',
    body: JSON.stringify({ strategy: 'weighted', chain: [{ target: 'ollama/gemma3:4b', weight: 3 }, { target: 'groq/llama-3.1-8b-instant', weight: 1 }] }),
  });
  expect(patch.status).toBe(200);
  // The usage store writes in ~1 s batches: wait until every seeded request is stored.
  await waitUntil('the seeded requests in the usage store', async () => ((await (await admin('/admin/usage/requests?limit=500')).json()) as { data: unknown[] }).data.length === sent);
  shots = screenshotFolder();
  viewer = await openViewer(browser);
  page = viewer.page;
});

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await ollama?.close();
  await groq?.close();
  if (shots !== undefined && shots !== DOCS_SCREENSHOTS) rmSync(shots, { recursive: true, force: true });
});

async function photograph(name: string, fullPage = false): Promise<void> {
  // Let polled data and charts settle, and keep the caret out of the picture.
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  const file = join(shots, `${name}.png`);
  await page.screenshot({ path: file, animations: 'disabled', caret: 'hide', fullPage });
  expect(readFileSync(file).subarray(1, 4).toString()).toBe('PNG');
}

describe('every page, on seeded traffic', () => {
  it('signs in with the keyboard alone and moves between pages with it', async () => {
    await page.goto(`${gw.url}/ui/`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('admin-key');
    await page.keyboard.type(ADMIN_KEY);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    // After a reload the first Tab reaches the skip link, the next ones the page links; Enter follows one.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    let label = '';
    for (let i = 0; i < 10 && label !== 'Providers'; i += 1) {
      await page.keyboard.press('Tab');
      label = await page.evaluate(() => document.activeElement?.textContent ?? '');
    }
    expect(label).toBe('Providers');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Providers' }).waitFor();
    expect(await page.getByRole('link', { name: 'Providers' }).getAttribute('aria-current')).toBe('page');
    // Focus moved to the new page's content: the next Tab is its first control.
    await page.waitForFunction(() => document.activeElement?.id === 'main');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Probe now');
  });

  it('Overview: provider states, the window figures, per-alias latency and the charts', async () => {
    await openPage(page, 'Overview');
    const status = (name: string) => page.locator(`.provider-list li[data-provider="${name}"]`).textContent();
    await expect.poll(() => status('ollama')).toContain('healthy');
    await expect.poll(() => status('together')).toContain('unhealthy');
    expect(await status('openrouter')).toContain('unconfigured');
    expect(await status('openrouter')).toContain('OPENROUTER_API_KEY');
    await page.getByLabel('Window').selectOption('1h');
    const tile = (label: string) => page.locator('.tile').filter({ has: page.getByText(label, { exact: true }) }).locator('dd');
    await expect.poll(() => tile('Requests').textContent()).toMatch(/^\d+$/);
    expect(Number(await tile('Rescued by failover').textContent())).toBeGreaterThanOrEqual(LOCAL_FAILURES);
    expect(await tile('Cost').textContent()).toMatch(/^\$/); // groq has a price
    expect(await page.getByRole('table', { name: 'Per alias, last 1 h', exact: true }).locator('tbody tr').count()).toBeGreaterThanOrEqual(4);
    await page.locator('.chart canvas').nth(1).waitFor();
    expect(await page.getByRole('figure').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('Requests per alias, last 1 h')]));
    await photograph('overview', true);
  });

  it('Aliases: each chain with its live states, and the edit form', async () => {
    await openPage(page, 'Aliases');
    const longForm = page.locator('.alias-card', { has: page.getByRole('heading', { name: 'mana/long-form', exact: true }) });
    await expect.poll(() => longForm.locator('.chain li').first().textContent()).toContain('unhealthy');
    const reasoning = page.locator('.alias-card', { has: page.getByRole('heading', { name: 'mana/reasoning', exact: true }) });
    expect(await reasoning.locator('.chain li').first().textContent()).toContain('unconfigured');
    // Load: the local box's count against its max_concurrency, and the streamed target's time to first token.
    const fastText = page.locator('.alias-card', { has: page.getByRole('heading', { name: 'mana/fast-text', exact: true }) });
    expect(await fastText.locator('.chain li').first().textContent()).toContain('in flight 0/4');
    const vision = page.locator('.alias-card', { has: page.getByRole('heading', { name: 'mana/vision', exact: true }) });
    expect(await vision.locator('.chain li').first().textContent()).toMatch(/in flight 0\/4 · first token \d+ ms/);
    await photograph('aliases');

    await page.getByRole('button', { name: 'Edit mana/fast-text' }).click();
    await page.getByRole('heading', { name: 'Edit mana/fast-text' }).waitFor();
    expect(await page.getByLabel('Strategy').inputValue()).toBe('weighted');
    expect(await page.getByLabel('Weight of ollama/gemma3:4b').inputValue()).toBe('3');
    // Every control has a name a screen reader reads out.
    const unnamed = await page.evaluate(() =>
      [...document.querySelectorAll('main input, main select, main textarea, main button')]
        .filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.getAttribute('aria-label') && (el.textContent ?? '').trim() === '')
        .map((el) => el.outerHTML),
    );
    expect(unnamed).toEqual([]);
    await photograph('alias-form');
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  it('Providers: configuration and health, whether a key is set but never the key, and probe now', async () => {
    await openPage(page, 'Providers');
    const row = (name: string) => page.locator(`tr[data-provider="${name}"]`);
    await expect.poll(() => row('groq').textContent()).toContain('set');
    expect(await row('groq').textContent()).toContain('from GROQ_API_KEY');
    expect(await row('groq').textContent()).toContain('healthy');
    expect(await row('together').textContent()).toMatch(/unhealthy[\s\S]*refused|ECONNREFUSED/i);
    expect(await row('openrouter').textContent()).toContain('not set');
    expect(await row('ollama').textContent()).toContain('none needed');
    const text = (await page.content()) + (await page.evaluate(() => JSON.stringify(sessionStorage)));
    expect(text).not.toContain(GROQ_KEY);
    expect(text).not.toContain(TOGETHER_KEY);

    const probesBefore = ollama.probeCount();
    await page.getByRole('button', { name: 'Probe now' }).click();
    await page.getByRole('status').filter({ hasText: 'Probed every configured provider at' }).waitFor();
    expect(ollama.probeCount()).toBeGreaterThan(probesBefore);
    await photograph('providers');
  });

  it('Requests: a rescued request expands to its attempts, the failed-over one flagged', async () => {
    await openPage(page, 'Requests');
    await page.getByLabel('Alias').selectOption('mana/fast-text');
    await page.getByLabel('Failed over').selectOption('true');
    const rows = page.locator('tr.request-row');
    await expect.poll(() => rows.count()).toBe(LOCAL_FAILURES);
    // The inbound API the request came through, beside its alias.
    expect(await rows.first().locator('td').nth(1).textContent()).toBe('mana/fast-text via chat_completions');
    await rows.first().getByRole('button', { name: /Show attempts/ }).click();
    const attempts = await page.locator('table.attempts tbody tr').allTextContents();
    expect(attempts[0]).toMatch(/ollama\/gemma3:4b[\s\S]*failed over[\s\S]*HTTP 500/);
    expect(attempts[1]).toMatch(/groq\/llama-3.1-8b-instant[\s\S]*ok/);
    await page.getByLabel('Failed over').selectOption('');
    await page.getByLabel('Alias').selectOption('');
    await expect.poll(() => rows.count()).toBeGreaterThan(LOCAL_FAILURES);
    await rows.first().getByRole('button', { name: /Show attempts/ }).click();
    await page.getByLabel('Alias').selectOption('mana/fast-text');
    await page.getByLabel('Failed over').selectOption('true');
    await expect.poll(() => rows.count()).toBe(LOCAL_FAILURES);
    await photograph('requests');
  });

  it('Errors: failed requests and failed-over attempts grouped by target and reason', async () => {
    await openPage(page, 'Errors');
    const group = page.locator('tbody tr', { hasText: 'ollama/gemma3:4b' });
    await expect.poll(() => group.count()).toBe(1);
    const cells = await group.locator('th, td').allTextContents();
    expect(cells[0]).toBe('ollama/gemma3:4b');
    expect(cells[1]).not.toBe('');
    expect(cells[2]).toBe('failed-over attempt');
    expect(cells[3]).toBe(String(LOCAL_FAILURES));
    expect(cells[5]).toBe('mana/fast-text');
    // The dead provider's attempts, and groq's 429, are their own groups.
    expect(await page.locator('tbody tr', { hasText: 'together/' }).count()).toBeGreaterThanOrEqual(1);
    await photograph('errors');
  });

  it('Config history: the versions, and the diff of the admin edit', async () => {
    await openPage(page, 'Config history');
    const versions = page.getByRole('list', { name: 'Applied config versions, newest first' }).locator('li');
    await expect.poll(() => versions.count()).toBe(2);
    expect(await versions.nth(0).textContent()).toMatch(/admin[\s\S]*current/);
    expect(await versions.nth(1).textContent()).toContain('startup');
    await versions.nth(0).getByRole('button').click();
    const diff = page.getByLabel('Changes against the previous version');
    await diff.waitFor();
    const added = (await diff.locator('.diff-add').allTextContents()).map((line) => line.trimEnd());
    expect(added).toEqual(expect.arrayContaining([expect.stringMatching(/^\+\s+strategy: weighted$/)]));
    expect(await page.getByRole('button', { name: 'Roll back to this version' }).count()).toBe(0); // it is the current one
    await photograph('config-history');
  });

  it('fits a phone: no page scrolls sideways, and the Overview is photographed at phone size', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const label of ['Aliases', 'Providers', 'Requests', 'Errors', 'Config history', 'Overview']) {
      await openPage(page, label);
      await page.waitForTimeout(100); // one layout pass after the data arrived
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, label).toBeLessThanOrEqual(0);
    }
    await page.locator('.chart canvas').first().waitFor();
    await photograph('overview-phone');
  });

  it('logged no console error and no Content-Security-Policy violation', async () => {
    expect(viewer.problems).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);
  });
});

/**
 * `kill -9` while admin writes are running leaves the config file either as it
 * was or as one of the written versions — never torn — and the gateway starts
 * again on it.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '@mana/llm-router';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway } from './harness.js';

const ADMIN_KEY = 'admin-key-crash-e2e-51c0';
/** Each write carries ~256 KB so that a write takes long enough to be hit mid-way. */
const FILLER = 'x'.repeat(256 * 1024);

let cloud: FakeUpstream;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
});

afterAll(async () => {
  await cloud?.close();
});

describe('kill -9 during admin writes', () => {
  it.each([15, 40, 90])('killed %i ms into a stream of writes: the file parses and is the old or a written version', async (delayMs) => {
    const config = `providers:\n  ok: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n` + aliasesYaml({ 'mana/crash': ['ok/m'] }, ['ok/m']);
    const gw = await spawnGateway({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY } });
    const sent = new Set<string>(['mana/crash (test)']);
    let stop = false;
    const writer = (async () => {
      for (let i = 0; !stop && i < 200; i++) {
        const description = `write ${i} ${FILLER}`;
        sent.add(description);
        await fetch(`${gw.url}/admin/aliases/mana/crash`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ description, chain: ['ok/m'] }),
        }).then((r) => r.arrayBuffer(), () => undefined);
      }
    })();
    await gw.waitForLog((l) => l.msg === 'config written');
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    gw.child.kill('SIGKILL');
    await gw.exited;
    stop = true;
    await writer;

    const text = await readFile(gw.configPath, 'utf8');
    const snapshot = parseConfig(text, { env: {} });
    expect(sent.has(snapshot.aliases.get('mana/crash')!.description)).toBe(true);

    // And the gateway starts on it again.
    const again = await spawnGateway({ config: 'unused: true\n', args: ['--config', gw.configPath] });
    expect((await fetch(`${again.url}/readyz`)).status).toBe(200);
    await again.stop();
    await gw.stop();
  });
});

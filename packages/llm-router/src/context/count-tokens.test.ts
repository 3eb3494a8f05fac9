/**
 * `router.countTokens`: the prompt estimate for the target that would serve
 * the request now (configured, able to honour it, not blocked), the first
 * listed when none is; the errors `execute` would give. No sockets: counting
 * sends nothing.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { failure } from '../test-support.js';
import { createRouter, type Router } from '../router.js';
import type { ChatRequestBody } from '../types.js';
import { estimatePromptTokens } from './count-tokens.js';

const ALIAS = 'mana/long-form';

function router(): Router {
  const config = parseConfig(
    `providers:
  nokey: { type: openai, base_url: "http://127.0.0.1:9/v1", api_key_required: true }
  local: { type: ollama, base_url: "http://127.0.0.1:9" }
  cloud: { type: openai, base_url: "http://127.0.0.1:9/v1", api_key_required: false }
aliases:
  ${ALIAS}: [nokey/m, local/gemma3:4b, cloud/m]
  mana/nowhere: [nokey/m]
  mana/small-first:
    chain:
      - { target: local/tiny, settings: { context_window: 64, context_reserve: 60 } }
      - cloud/m
${otherAliases(ALIAS)}`,
    { env: {} },
  );
  return createRouter({ config });
}

const BODY: ChatRequestBody = { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Write a haiku about failover' }] };

describe('countTokens', () => {
  it("counts for the first target that would be called: not an unconfigured one, not one that cannot honour the request", async () => {
    const r = router();
    const tokens = estimatePromptTokens(BODY);
    expect(tokens).toBeGreaterThan(6);
    expect(r.countTokens({ model: ALIAS, body: BODY, stream: false })).toEqual({ inputTokens: tokens, alias: ALIAS, target: 'local/gemma3:4b' });
    // Ollama cannot give two choices: the cloud target is the one that would answer.
    expect(r.countTokens({ model: ALIAS, body: { ...BODY, n: 2 }, stream: false }).target).toBe('cloud/m');
    // No target usable: still a count, for the first listed.
    expect(r.countTokens({ model: 'mana/nowhere', body: BODY, stream: false })).toMatchObject({ inputTokens: tokens, target: 'nokey/m' });
    await r.close();
  });

  it('a target the prompt does not fit is passed over, as the attempt loop skips it (context_too_small)', async () => {
    const r = router();
    // ~20 prompt tokens + 60 reserved for the answer > a window of 64: the loop would never send it there.
    expect(r.countTokens({ model: 'mana/small-first', body: BODY, stream: false }).target).toBe('cloud/m');
    await r.close();
  });

  it('an unknown model and an embedding alias are the errors execute gives', async () => {
    const r = router();
    expect((await failure(Promise.resolve().then(() => r.countTokens({ model: 'mana/nope', body: BODY, stream: false })))).code).toBe('unknown_model');
    expect((await failure(Promise.resolve().then(() => r.countTokens({ model: 'mana/embed', body: BODY, stream: false })))).code).toBe('alias_kind_mismatch');
    await r.close();
  });
});

import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isRouterError } from '../errors.js';
import { DEFAULT_SETTINGS, OLLAMA_FIRST_BYTE_TIMEOUT_MS } from './defaults.js';
import { loadConfigFile, parseConfig } from './load-config.js';
import { unconfiguredReason } from './provider-status.js';
import { EMBED_ALIAS_LINE, otherAliases, STRINGS_ONLY, withLongForm } from './test-configs.js';

const env = { GROQ_API_KEY: 'gsk-secret', OPENROUTER_API_KEY: 'or-secret' };

function parseError(text: string, environment: Record<string, string> = env): string {
  try {
    parseConfig(text, { source: 'aliases.yaml', env: environment });
  } catch (error) {
    expect(isRouterError(error)).toBe(true);
    expect((error as { code: string }).code).toBe('invalid_config');
    return (error as Error).message;
  }
  throw new Error('expected parseConfig to fail');
}

describe('parseConfig: happy paths', () => {
  it('accepts the strings-only format with built-in providers', () => {
    const snapshot = parseConfig(STRINGS_ONLY, { source: 'aliases.yaml', env, now: () => 1234 });
    expect(snapshot.source).toBe('aliases.yaml');
    expect(snapshot.loadedAt).toBe(1234);
    expect([...snapshot.aliases.keys()]).toEqual([
      'mana/fast-text',
      'mana/long-form',
      'mana/structured',
      'mana/reasoning',
      'mana/vision',
      'mana/embed',
    ]);
    const longForm = snapshot.aliases.get('mana/long-form');
    expect(longForm?.strategy).toBe('failover');
    expect(longForm?.onAllUnhealthy).toBe('fail');
    expect(longForm?.failOverOnEmpty).toBe(true);
    expect(longForm?.chain.map((t) => [t.provider, t.model, t.weight])).toEqual([
      ['ollama', 'gemma3:12b', 1],
      ['groq', 'llama-3.3-70b-versatile', 1],
      // splits at the first slash only
      ['openrouter', 'anthropic/claude-3.5-haiku', 1],
    ]);
    expect([...snapshot.providers.keys()].sort()).toEqual(['anthropic', 'google', 'groq', 'ollama', 'openrouter', 'together']);
    expect(snapshot.providers.get('anthropic')).toMatchObject({ type: 'anthropic', baseUrl: 'https://api.anthropic.com', requiresApiKey: true });
    expect(snapshot.providers.get('ollama')?.baseUrl).toBe('http://localhost:11434');
    expect(snapshot.providers.get('groq')).toMatchObject({ type: 'openai', baseUrl: 'https://api.groq.com/openai/v1', apiKey: 'gsk-secret', requiresApiKey: true });
    expect(snapshot.backgroundConcurrency).toBe(2);
    expect(snapshot.settings).toEqual(DEFAULT_SETTINGS);
  });

  it('accepts the full format of the contract', () => {
    const text = `
settings:
  probe_interval: 10s
  failure_threshold: 3
background_concurrency: 4
providers:
  ollama:  { type: ollama, base_url: "\${OLLAMA_URL:-http://localhost:11434}", options: { num_ctx: 8192 } }
  groq:    { type: openai, base_url: https://api.groq.com/openai/v1, api_key: "\${GROQ_API_KEY}" }
  local:   { type: openai, base_url: http://127.0.0.1:8000/v1/, api_key_required: false, check_models: true, settings: { connect_timeout: 1s } }
aliases:
  mana/long-form:
    description: "Long prose"
    strategy: weighted
    on_all_unhealthy: try_anyway
    fail_over_on_empty: false
    settings: { first_byte_timeout: 60s }
    chain:
      - ollama/gemma3:12b
      - local/qwen
      - { target: openrouter/anthropic/claude-3.5-haiku, weight: 2, settings: { retries: 1 } }
  mana/fast-text: [ollama/gemma3:4b]
  mana/structured: { chain: [groq/llama-3.3-70b-versatile] }
  mana/reasoning: [groq/llama-3.3-70b-versatile]
  mana/vision: [ollama/llava]
${EMBED_ALIAS_LINE}  mana/extra-alias: [ollama/llava]
`;
    const snapshot = parseConfig(text, { env: { ...env, OLLAMA_URL: 'http://10.0.0.5:11434' } });
    expect(snapshot.backgroundConcurrency).toBe(4);
    expect(snapshot.settings.probeIntervalMs).toBe(10_000);
    const local = snapshot.providers.get('local');
    expect(local).toMatchObject({ type: 'openai', baseUrl: 'http://127.0.0.1:8000/v1', requiresApiKey: false, checkModels: true, apiKey: undefined });
    expect(snapshot.providers.get('ollama')?.options).toEqual({ num_ctx: 8192 });
    expect(snapshot.providers.get('ollama')?.baseUrl).toBe('http://10.0.0.5:11434');
    const alias = snapshot.aliases.get('mana/long-form');
    expect(alias).toMatchObject({ description: 'Long prose', strategy: 'weighted', onAllUnhealthy: 'try_anyway', failOverOnEmpty: false });
    expect(alias?.chain.map((t) => t.weight)).toEqual([1, 1, 2]);
    expect(snapshot.aliases.has('mana/extra-alias')).toBe(true);
  });

  it('returns an immutable snapshot', () => {
    const snapshot = parseConfig(STRINGS_ONLY, { env });
    expect(() => (snapshot.aliases as Map<string, unknown>).set('mana/x', {})).toThrow(TypeError);
    expect(() => (snapshot.providers as Map<string, unknown>).delete('groq')).toThrow(TypeError);
    expect(Object.isFrozen(snapshot)).toBe(true);
    expect(Object.isFrozen(snapshot.aliases.get('mana/vision')?.chain)).toBe(true);
    expect(Object.isFrozen(snapshot.providers.get('groq')?.settings)).toBe(true);
  });

  it('loads a file and names it in errors', async () => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'router-config-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'ok.yaml'), STRINGS_ONLY);
    await writeFile(join(dir, 'bad.yaml'), 'aliases:\n  mana/fast-text: []\n');
    expect((await loadConfigFile(join(dir, 'ok.yaml'), { env })).source).toBe(join(dir, 'ok.yaml'));
    await expect(loadConfigFile(join(dir, 'bad.yaml'), { env })).rejects.toThrow(`invalid config at ${join(dir, 'bad.yaml')} line 2`);
    await expect(loadConfigFile(join(dir, 'missing.yaml'), { env })).rejects.toMatchObject({ code: 'invalid_config', message: expect.stringContaining('ENOENT') });
  });
});

describe('parseConfig: env interpolation', () => {
  it('substitutes ${VAR} and ${VAR:-default} in a provider\'s api_key, headers, base_url and options', () => {
    const text = withLongForm(
      '    chain: [local/m]\n',
      'providers:\n  local:\n    type: openai\n    base_url: "http://${HOST:-127.0.0.1}:${PORT}/v1"\n    api_key: "k-${SUFFIX:-x}"\n' +
        '    headers: { Authorization: "Bearer ${TOKEN}" }\n    options: { tag: "${TAG:-t}" }\n',
    );
    const snapshot = parseConfig(text, { env: { PORT: '8000', HOST: '', TOKEN: 'tok' } });
    const local = snapshot.providers.get('local');
    // `:-` also replaces an empty value
    expect(local?.baseUrl).toBe('http://127.0.0.1:8000/v1');
    expect(local?.apiKey).toBe('k-x');
    expect(local?.headers).toEqual({ Authorization: 'Bearer tok' });
    expect(local?.options).toEqual({ tag: 't' });
  });

  it('takes what clients are shown as written: a description keeps its ${VAR}; a target or embedding_space with one is refused', () => {
    const env = { MANA_LLM_ADMIN_KEY: 'admin-secret-value', MODEL: 'gemma3:12b' };
    const described = parseConfig(withLongForm('    description: "${MANA_LLM_ADMIN_KEY} by $${WHO}"\n    chain: [ollama/a]\n'), { env });
    expect(described.aliases.get('mana/long-form')?.description).toBe('${MANA_LLM_ADMIN_KEY} by $${WHO}');
    expect(parseError(withLongForm('    chain: ["ollama/${MODEL}"]\n'), env)).toContain(
      'line 3 (alias mana/long-form): target ollama/${MODEL}: ${VAR} is not expanded in a target',
    );
    const space = parseError(STRINGS_ONLY.replace('embedding_space: nomic-embed-text-v1.5', 'embedding_space: "${MANA_LLM_ADMIN_KEY}"'), env);
    expect(space).toContain('embedding_space ${MANA_LLM_ADMIN_KEY}: ${VAR} is not expanded in an embedding_space');
    expect(space).not.toContain('admin-secret-value');
  });

  it('interpolates durations and counts given as strings', () => {
    const text = `settings: { probe_interval: "\${PROBE:-5s}", retries: "\${RETRIES:-0}" }\n${STRINGS_ONLY}`;
    const snapshot = parseConfig(text, { env: { RETRIES: '2' } });
    expect(snapshot.settings.probeIntervalMs).toBe(5_000);
    expect(snapshot.settings.retries).toBe(2);
  });

  it('marks a cloud provider with an empty key unconfigured, naming the variable, never the value', () => {
    const snapshot = parseConfig(STRINGS_ONLY, { env: { GROQ_API_KEY: 'gsk-secret' } });
    const together = snapshot.providers.get('together');
    expect(together?.apiKey).toBeUndefined();
    expect(together && unconfiguredReason(together)).toBe('missing api key (TOGETHER_API_KEY)');
    const groq = snapshot.providers.get('groq');
    expect(groq && unconfiguredReason(groq)).toBeUndefined();
    expect(unconfiguredReason(snapshot.providers.get('ollama')!)).toBeUndefined();
  });

  it('a provider needs a key exactly when api_key is written', () => {
    const text =
      `providers:\n` +
      `  local: { type: openai, base_url: http://127.0.0.1:8000/v1 }\n` +
      `  keyed: { type: openai, base_url: http://127.0.0.1:8001/v1, api_key: "\${LOCAL_KEY}" }\n` +
      `  empty: { type: openai, base_url: http://127.0.0.1:8002/v1, api_key: "\${EMPTY_KEY}" }\n` +
      `  literal: { type: openai, base_url: http://127.0.0.1:8003/v1, api_key: "k-literal" }\n` +
      `  optional: { type: openai, base_url: http://127.0.0.1:8004/v1, api_key: "\${LOCAL_KEY}", api_key_required: false }\n` +
      STRINGS_ONLY;
    const snapshot = parseConfig(text, { env: { EMPTY_KEY: '' } });
    const local = snapshot.providers.get('local')!;
    expect(local).toMatchObject({ apiKey: undefined, requiresApiKey: false });
    expect(unconfiguredReason(local)).toBeUndefined();
    expect(unconfiguredReason(snapshot.providers.get('keyed')!)).toBe('missing api key (LOCAL_KEY)');
    expect(unconfiguredReason(snapshot.providers.get('empty')!)).toBe('missing api key (EMPTY_KEY)');
    expect(snapshot.providers.get('literal')).toMatchObject({ apiKey: 'k-literal', requiresApiKey: true });
    expect(unconfiguredReason(snapshot.providers.get('optional')!)).toBeUndefined();
    // The built-in cloud providers keep requiring theirs.
    for (const name of ['groq', 'openrouter', 'together', 'google', 'anthropic']) {
      expect(unconfiguredReason(snapshot.providers.get(name)!)).toMatch(/^missing api key \([A-Z]+_API_KEY\)$/);
    }
    expect(unconfiguredReason(snapshot.providers.get('ollama')!)).toBeUndefined();
  });

  it('keeps a base_url query string (sent on every call) and trims trailing slashes of the path only', () => {
    const text =
      `providers:\n  azure: { type: openai, base_url: "https://x.openai.azure.com/openai/v1/?api-version=2024-10-21" }\n` + STRINGS_ONLY;
    expect(parseConfig(text).providers.get('azure')?.baseUrl).toBe('https://x.openai.azure.com/openai/v1?api-version=2024-10-21');
  });

  it('propagate_trace: off for the built-in cloud providers, on for ollama and for every provider a file declares; a file\'s value wins', () => {
    const text =
      `providers:\n  vllm: { type: openai, base_url: http://10.0.0.5:8000/v1 }\n  groq: { propagate_trace: true }\n  ollama: { propagate_trace: "\${TRACE_OLLAMA}" }\n` + STRINGS_ONLY;
    const providers = parseConfig(text, { env: { ...env, TRACE_OLLAMA: 'false' } }).providers;
    const propagates = (name: string) => providers.get(name)?.propagateTrace;
    expect([propagates('vllm'), propagates('groq'), propagates('ollama')]).toEqual([true, true, false]);
    expect(['openrouter', 'together', 'google', 'anthropic'].map(propagates)).toEqual([false, false, false, false]);
    expect(parseConfig(STRINGS_ONLY, { env }).providers.get('ollama')?.propagateTrace).toBe(true);
    expect(() => parseConfig(`providers:\n  vllm: { type: openai, base_url: http://h/v1, propagate_trace: sometimes }\n` + STRINGS_ONLY, { env })).toThrow(
      /propagate_trace must be true or false/,
    );
  });

  it('reads process.env when no env is given', () => {
    process.env.ROUTER_TEST_OLLAMA = 'http://127.0.0.1:9';
    try {
      const snapshot = parseConfig(`providers:\n  ollama: { base_url: "\${ROUTER_TEST_OLLAMA}" }\n${STRINGS_ONLY}`);
      expect(snapshot.providers.get('ollama')?.baseUrl).toBe('http://127.0.0.1:9');
    } finally {
      delete process.env.ROUTER_TEST_OLLAMA;
    }
  });
});

describe('parseConfig: settings cascade', () => {
  const text = `
settings: { connect_timeout: 2s, retries: 1 }
providers:
  groq: { settings: { connect_timeout: 3s, rate_limit_cooldown: 20s } }
aliases:
  mana/long-form:
    settings: { connect_timeout: 4s, first_byte_timeout: 60s }
    chain:
      - ollama/gemma3:12b
      - groq/llama-3.3-70b-versatile
      - { target: groq/llama-3.1-8b-instant, settings: { connect_timeout: 500ms, retries: 3 } }
  mana/fast-text: [ollama/gemma3:4b, groq/llama-3.1-8b-instant]
  mana/structured: [ollama/gemma3:4b]
  mana/reasoning: [ollama/gemma3:4b]
  mana/vision: [ollama/gemma3:4b]
${EMBED_ALIAS_LINE}`;
  const snapshot = parseConfig(text, { env });

  it('applies defaults ← global ← provider ← alias ← target', () => {
    const [ollama, groq, groqSmall] = snapshot.aliases.get('mana/long-form')!.chain;
    expect(ollama?.settings).toMatchObject({ connectTimeoutMs: 4_000, firstByteTimeoutMs: 60_000, retries: 1, rateLimitCooldownMs: 15_000 });
    expect(groq?.settings).toMatchObject({ connectTimeoutMs: 4_000, rateLimitCooldownMs: 20_000, retries: 1 });
    expect(groqSmall?.settings).toMatchObject({ connectTimeoutMs: 500, retries: 3, rateLimitCooldownMs: 20_000, firstByteTimeoutMs: 60_000 });
    expect(snapshot.providers.get('groq')?.settings.connectTimeoutMs).toBe(3_000);
    expect(snapshot.settings.connectTimeoutMs).toBe(2_000);
  });

  it('defaults first_byte_timeout to 45 s for cloud and 300 s for ollama unless set', () => {
    const [ollama, groq] = snapshot.aliases.get('mana/fast-text')!.chain;
    expect(ollama?.settings.firstByteTimeoutMs).toBe(OLLAMA_FIRST_BYTE_TIMEOUT_MS);
    expect(groq?.settings.firstByteTimeoutMs).toBe(45_000);
    const globalSet = parseConfig(`settings: { first_byte_timeout: 20s }\n${STRINGS_ONLY}`, { env });
    expect(globalSet.aliases.get('mana/fast-text')?.chain[0]?.settings.firstByteTimeoutMs).toBe(20_000);
  });

  it('hosted_tools: refuse unless set, globally or per alias (the most specific wins)', () => {
    expect(snapshot.aliases.get('mana/fast-text')!.chain[0]?.settings.hostedTools).toBe('refuse');
    const globalSet = parseConfig(`settings: { hosted_tools: drop }\n${STRINGS_ONLY}`, { env });
    expect(globalSet.aliases.get('mana/fast-text')!.chain.map((t) => t.settings.hostedTools)).toEqual(['drop', 'drop']);
    const aliasSet = parseConfig(
      `settings: { hosted_tools: drop }\n${STRINGS_ONLY.replace('  mana/fast-text:\n    - ollama/gemma3:4b\n', '  mana/fast-text:\n    settings: { hosted_tools: refuse }\n    chain:\n    - ollama/gemma3:4b\n')}`,
      { env },
    );
    expect(aliasSet.aliases.get('mana/fast-text')!.chain[0]?.settings.hostedTools).toBe('refuse');
    expect(aliasSet.aliases.get('mana/long-form')!.chain[0]?.settings.hostedTools).toBe('drop');
  });

  it('parses every duration form', () => {
    const durations = parseConfig(
      `settings: { probe_interval: 1h, probe_timeout: 500ms, unhealthy_period: 2m, rate_limit_cooldown: 1500, retry_max_wait: 1.5s }\n${STRINGS_ONLY}`,
      { env },
    ).settings;
    expect(durations).toMatchObject({ probeIntervalMs: 3_600_000, probeTimeoutMs: 500, unhealthyPeriodMs: 120_000, rateLimitCooldownMs: 1_500, retryMaxWaitMs: 1_500 });
  });

  it('bounds what an upstream can make us hold: sizes with units or in bytes, defaults otherwise, per target too', () => {
    const defaults = parseConfig(STRINGS_ONLY, { env }).settings;
    expect(defaults).toMatchObject({ maxResponseBytes: 32 * 1024 ** 2, maxErrorBodyBytes: 64 * 1024, maxStreamEventBytes: 4 * 1024 ** 2, maxPreCommitBytes: 1024 ** 2 });
    const set = parseConfig(
      `settings: { max_response_bytes: 8mb, max_error_body_bytes: 4096, max_stream_event_bytes: "1.5MB", max_pre_commit_bytes: 64kb }\n` +
        withLongForm('    chain:\n      - { target: ollama/a, settings: { max_response_bytes: 1gb } }\n'),
      { env },
    );
    expect(set.settings).toMatchObject({ maxResponseBytes: 8 * 1024 ** 2, maxErrorBodyBytes: 4096, maxStreamEventBytes: 1.5 * 1024 ** 2, maxPreCommitBytes: 64 * 1024 });
    expect(set.aliases.get('mana/long-form')?.chain[0]?.settings.maxResponseBytes).toBe(1024 ** 3);
  });
});

describe('parseConfig: context windows and fail_over_on', () => {
  const text = `
providers:
  local: { type: ollama, base_url: "http://127.0.0.1:1", options: { num_ctx: 16384 } }
  bare: { type: ollama, base_url: "http://127.0.0.1:2" }
  groq: { settings: { context_window: 131072 } }
aliases:
  mana/long-form:
    fail_over_on: [refusal, invalid_json]
    fail_over_on_context_length: false
    chain:
      - local/a
      - bare/b
      - groq/c
      - { target: openrouter/d, settings: { context_window: 8000, context_reserve: 100 } }
      - together/e
${otherAliases('mana/long-form')}`;

  it('a window per target: declared (target ← alias ← provider), Ollama num_ctx, Ollama default 4096, or none', () => {
    const alias = parseConfig(text, { env: {} }).aliases.get('mana/long-form')!;
    expect(alias.chain.map((t) => [t.id, t.contextWindow])).toEqual([
      ['local/a', 16384],
      ['bare/b', 4096],
      ['groq/c', 131072],
      ['openrouter/d', 8000],
      ['together/e', undefined],
    ]);
    expect(alias.chain[3]!.settings.contextReserve).toBe(100);
    expect(alias.chain[0]!.settings.contextReserve).toBe(512);
  });

  it('fail_over_on is the whole list (empty only when listed); fail_over_on_context_length defaults to true', () => {
    const snapshot = parseConfig(text, { env: {} });
    const alias = snapshot.aliases.get('mana/long-form')!;
    expect([...alias.failOverOn]).toEqual(['refusal', 'invalid_json']);
    expect(alias.failOverOnEmpty).toBe(false);
    expect(alias.failOverOnContextLength).toBe(false);
    const other = snapshot.aliases.get('mana/fast-text')!;
    expect([...other.failOverOn]).toEqual(['empty']);
    expect(other.failOverOnContextLength).toBe(true);
  });

  it('the shipped aliases.yaml fails mana/structured over on invalid JSON', async () => {
    const shipped = await loadConfigFile(fileURLToPath(new URL('../../../../apps/llm-gateway/aliases.yaml', import.meta.url)), { env: {} });
    expect([...shipped.aliases.get('mana/structured')!.failOverOn]).toEqual(['empty', 'invalid_json']);
  });
});

describe('parseConfig: validation names the alias and line', () => {
  it.each([
    ['empty chain', withLongForm('    chain: []\n'), 'line 3 (alias mana/long-form): chain must list at least one'],
    ['empty strings-only chain', withLongForm('').replace('mana/long-form:\n', 'mana/long-form: []\n'), 'line 2 (alias mana/long-form): chain must list at least one'],
    ['alias without chain', withLongForm('    strategy: failover\n'), 'line 2 (alias mana/long-form): chain must list at least one'],
    ['unknown provider', withLongForm('    chain:\n      - ollama/a\n      - nope/model-x\n'), 'line 5 (alias mana/long-form): unknown provider "nope" in target nope/model-x'],
    ['unknown strategy', withLongForm('    strategy: fastest\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): unknown strategy "fastest"'],
    ['unknown on_all_unhealthy', withLongForm('    on_all_unhealthy: panic\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): unknown on_all_unhealthy "panic"'],
    ['weight on a failover alias', withLongForm('    chain:\n      - { target: ollama/a, weight: 2 }\n'), 'line 4 (alias mana/long-form): weight on target ollama/a needs strategy: weighted'],
    ['non-positive weight', withLongForm('    strategy: weighted\n    chain:\n      - { target: ollama/a, weight: 0 }\n'), 'line 5 (alias mana/long-form): weight of ollama/a must be a positive number'],
    ['bad duration', withLongForm('    settings: { first_byte_timeout: soon }\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): settings.first_byte_timeout must be a positive duration'],
    ['unknown hosted_tools', withLongForm('    settings: { hosted_tools: strip }\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): unknown settings.hosted_tools "strip" (known: refuse, drop)'],
    ['hosted_tools not a word', withLongForm('    settings: { hosted_tools: [drop] }\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): settings.hosted_tools must be a string'],
    ['negative duration', withLongForm('    settings: { unhealthy_period: -5s }\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): settings.unhealthy_period must be a duration'],
    ['negative number of ms', withLongForm('    settings: { retry_max_wait: -5 }\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): settings.retry_max_wait must be a duration'],
    ['absurd duration', withLongForm('    settings: { unhealthy_period: 99999999999h }\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): settings.unhealthy_period must be a duration'],
    ['unknown unit', withLongForm('    settings: { connect_timeout: 5 sec }\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): settings.connect_timeout must be a positive duration'],
    ['non-ASCII target', withLongForm('    chain: [ollama/模型]\n'), 'line 3 (alias mana/long-form): target "ollama/模型" may only contain printable ASCII characters'],
    ['target over 256 characters', withLongForm(`    chain: [ollama/${'m'.repeat(250)}]\n`), `line 3 (alias mana/long-form): target "ollama/${'m'.repeat(73)}" must be at most 256 characters, got 257`],
    ['zero size', withLongForm('    settings: { max_response_bytes: 0 }\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): settings.max_response_bytes must be a positive size'],
    ['bad size', withLongForm('    settings: { max_pre_commit_bytes: lots }\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): settings.max_pre_commit_bytes must be a positive size'],
    ['unknown alias key', withLongForm('    stratgy: failover\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): unknown key "stratgy" in alias mana/long-form'],
    ['unknown target key', withLongForm('    chain:\n      - { target: ollama/a, wieght: 2 }\n'), 'line 4 (alias mana/long-form): unknown key "wieght" in chain entry'],
    ['unknown setting', withLongForm('    settings: { unhealty_period: 5s }\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): unknown key "unhealty_period" in settings'],
    ['alias targeting an alias', withLongForm('    chain:\n      - ollama/a\n      - mana/fast-text\n'), 'line 5 (alias mana/long-form): target mana/fast-text is an alias'],
    ['target without provider', withLongForm('    chain: [gemma3]\n'), 'line 3 (alias mana/long-form): target "gemma3" must be provider/model'],
    ['duplicate target', withLongForm('    chain: [ollama/a, ollama/a]\n'), 'line 3 (alias mana/long-form): target ollama/a is listed twice'],
    ['bad fail_over_on_empty', withLongForm('    fail_over_on_empty: maybe\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): fail_over_on_empty must be true or false'],
    ['zero context_window on a target', withLongForm('    chain:\n      - { target: groq/a, settings: { context_window: 0 } }\n'), 'line 4 (alias mana/long-form): settings.context_window must be a whole number ≥ 1, got 0'],
    ['fractional context_window on an alias', withLongForm('    settings: { context_window: 8192.5 }\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): settings.context_window must be a whole number ≥ 1, got 8192.5'],
    ['context_window as text', withLongForm('    settings: { context_window: big }\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): settings.context_window must be a whole number ≥ 1, got "big"'],
    ['unknown fail_over_on entry', withLongForm('    fail_over_on: [empty, refusals]\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): unknown fail_over_on entry "refusals" (known: empty, content_filter, refusal, invalid_json)'],
    ['fail_over_on not a list', withLongForm('    fail_over_on: refusal\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): fail_over_on must be a list'],
    ['fail_over_on with fail_over_on_empty', withLongForm('    fail_over_on: [refusal]\n    fail_over_on_empty: false\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): use either fail_over_on or fail_over_on_empty'],
    ['bad fail_over_on_context_length', withLongForm('    fail_over_on_context_length: sometimes\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): fail_over_on_context_length must be true or false'],
  ])('%s', (_name, text, expected) => {
    expect(parseError(text)).toContain(`invalid config at aliases.yaml ${expected}`);
  });

  it('duplicate alias (YAML duplicate key)', () => {
    const text = withLongForm('    chain: [ollama/a]\n') + '  mana/long-form: [groq/b]\n';
    expect(parseError(text)).toBe(
      'invalid config at aliases.yaml line 9 (alias mana/long-form): duplicate alias mana/long-form (each key may appear once)',
    );
  });

  it('duplicate key inside an alias names the alias', () => {
    const text = withLongForm('    chain: [ollama/a]\n    chain: [ollama/b]\n');
    expect(parseError(text)).toBe(
      'invalid config at aliases.yaml line 4 (alias mana/long-form): duplicate key chain (each key may appear once)',
    );
  });

  it('an alias that is neither a list nor a map', () => {
    const text = withLongForm('').replace('mana/long-form:\n', 'mana/long-form: ollama/a\n');
    expect(parseError(text)).toContain('line 2 (alias mana/long-form): alias mana/long-form must be a list of provider/model targets or a map');
  });

  it('an alias outside the mana/ namespace is allowed (LiteLLM-style names), one that reads as provider/model is not', () => {
    const ok = withLongForm('    chain: [ollama/a]\n') + '  gpt-4o: [ollama/a]\n  team/writer: [ollama/b]\n';
    const snapshot = parseConfig(ok);
    expect(snapshot.aliases.get('gpt-4o')?.chain[0]?.id).toBe('ollama/a');
    expect(snapshot.aliases.has('team/writer')).toBe(true);
    const clash = withLongForm('    chain: [ollama/a]\n') + '  groq/writer: [ollama/a]\n';
    expect(parseError(clash)).toContain(`line 9 (alias groq/writer): alias name "groq/writer" clashes with provider groq's direct targets`);
    const badSlug = withLongForm('    chain: [ollama/a]\n') + '  mana/Writer: [ollama/a]\n';
    expect(parseError(badSlug)).toContain('(alias mana/Writer): alias name "mana/Writer" must be mana/ followed by lowercase');
    const long = withLongForm('    chain: [ollama/a]\n') + `  ${'x'.repeat(201)}: [ollama/a]\n`;
    expect(parseError(long)).toContain('must be at most 200 letters');
  });

  it('missing @mana/llm-aliases alias', () => {
    const text = STRINGS_ONLY.replace(/ {2}mana\/vision:\n(?: {4}- .*\n)+/, '');
    expect(parseError(text)).toBe(
      'invalid config at aliases.yaml line 2: missing alias mana/vision (MANA_LLM.VISION): every @mana/llm-aliases alias must be defined',
    );
  });

  it('no aliases section', () => {
    expect(parseError('settings: { retries: 1 }\n')).toContain('an "aliases:" section is required');
    expect(parseError('')).toContain('an "aliases:" section is required');
  });

  it('unknown keys at the top level, in settings and in providers', () => {
    expect(parseError(`alias: {}\n${STRINGS_ONLY}`)).toContain('aliases.yaml line 1: unknown key "alias" in the top level');
    expect(parseError(`settings:\n  retry: 1\n${STRINGS_ONLY}`)).toContain('aliases.yaml line 2: unknown key "retry" in settings');
    expect(parseError(`providers:\n  groq:\n    apikey: x\n${STRINGS_ONLY}`)).toContain('aliases.yaml line 3: unknown key "apikey" in provider groq');
  });

  it('provider problems', () => {
    expect(parseError(`providers:\n  vllm: { base_url: http://127.0.0.1:8000/v1 }\n${STRINGS_ONLY}`)).toContain('line 2: provider vllm needs a type');
    expect(parseError(`providers:\n  vllm:\n    type: grpc\n    base_url: http://x\n${STRINGS_ONLY}`)).toContain('line 3: provider vllm has unknown type "grpc"');
    expect(parseError(`providers:\n  vllm: { type: openai }\n${STRINGS_ONLY}`)).toContain('line 2: provider vllm needs a base_url');
    expect(parseError(`providers:\n  vllm:\n    type: openai\n    base_url: ftp://x\n${STRINGS_ONLY}`)).toContain('line 4: provider vllm base_url must be an http(s) URL');
    expect(parseError(`providers:\n  mana: { type: openai, base_url: http://x }\n${STRINGS_ONLY}`)).toContain('line 2: provider name "mana"');
  });

  it('bad counts', () => {
    expect(parseError(`settings: { failure_threshold: 0 }\n${STRINGS_ONLY}`)).toContain('line 1: settings.failure_threshold must be a whole number ≥ 1');
    expect(parseError(`background_concurrency: 1.5\n${STRINGS_ONLY}`)).toContain('line 1: background_concurrency must be a whole number ≥ 1');
  });

  it('usage_retention: a duration of at least a minute, absent when not given', () => {
    expect(parseConfig(`usage_retention: 7d\n${STRINGS_ONLY}`, { env }).usageRetentionMs).toBe(7 * 86_400_000);
    expect(parseConfig(STRINGS_ONLY, { env }).usageRetentionMs).toBeUndefined();
    expect(parseError(`usage_retention: 30s\n${STRINGS_ONLY}`)).toContain('line 1: usage_retention must be at least 1m');
    expect(parseError(`usage_retention: forever\n${STRINGS_ONLY}`)).toContain('line 1: usage_retention must be a positive duration');
  });

  it('YAML syntax errors carry their line', () => {
    expect(parseError('aliases:\n  mana/fast-text: [ollama/a]\n  - groq/b\n  mana/vision: [ollama/b]\n')).toMatch(
      /^invalid config at aliases.yaml line 3: YAML syntax error: /,
    );
  });

  it('refuses user info and a fragment in base_url, without quoting the URL', () => {
    const userinfo = parseError(`providers:\n  vllm:\n    type: openai\n    base_url: "http://\${VLLM_AUTH}@127.0.0.1:8000/v1"\n${STRINGS_ONLY}`, {
      VLLM_AUTH: 'admin:hunter2-secret',
    });
    expect(userinfo).toContain('invalid config at aliases.yaml line 4: provider vllm base_url must not contain a user name or password');
    expect(userinfo).not.toContain('hunter2');
    expect(userinfo).not.toContain('admin');
    expect(parseError(`providers:\n  vllm: { type: openai, base_url: "http://u:p@127.0.0.1/v1" }\n${STRINGS_ONLY}`)).toContain(
      'line 2: provider vllm base_url must not contain a user name or password',
    );
    expect(parseError(`providers:\n  vllm: { type: openai, base_url: "http://127.0.0.1/v1#x" }\n${STRINGS_ONLY}`)).toContain(
      'line 2: provider vllm base_url must not contain a #fragment',
    );
  });

  it('refuses provider headers the HTTP client would refuse on every call, with their line', () => {
    const provider = (lines: string): string => `providers:\n  vllm:\n    type: openai\n    base_url: http://x\n${lines}${STRINGS_ONLY}`;
    expect(parseError(provider('    headers:\n      X-Title: "a\\nb"\n'))).toContain('line 6: provider vllm header X-Title must be one line of printable characters');
    expect(parseError(provider('    headers:\n      Transfer-Encoding: chunked\n'))).toContain('line 6: provider vllm header Transfer-Encoding is set by the gateway itself');
    expect(parseError(provider('    headers:\n      Connection: close\n'))).toContain('line 6: provider vllm header Connection is set by the gateway itself');
    expect(parseError(provider('    headers:\n      "X:Y": v\n'))).toContain('line 6: provider vllm header name "X:Y" is not a valid HTTP header name');
    expect(parseError(provider('    secret_headers: [X-Token, "bad name"]\n'))).toContain('line 5: provider vllm header name "bad name" is not a valid HTTP header name');
    expect(parseError(provider('    secret_headers: X-Token\n'))).toContain('line 5: provider vllm secret_headers must be a list of header names');
    const ok = parseConfig(provider('    headers: { X-Title: "tab\\tok", X-Token: t }\n    secret_headers: [X-Token]\n'), { env });
    expect(ok.providers.get('vllm')?.headers).toEqual({ 'X-Title': 'tab\tok', 'X-Token': 't' });
  });

  it('names a variable, never its value, when an interpolated value is invalid', () => {
    const secret = { MYKEY: 'sk-live-0123456789abcdef' };
    const cases: [string, string][] = [
      [`providers:\n  vllm:\n    type: "\${MYKEY}"\n    base_url: http://x\n${STRINGS_ONLY}`, 'line 3: provider vllm has unknown type "${MYKEY}"'],
      [withLongForm('    strategy: "\${MYKEY}"\n    chain: [ollama/a]\n'), 'line 3 (alias mana/long-form): unknown strategy "${MYKEY}"'],
      [withLongForm('    on_all_unhealthy: "\${MYKEY}"\n    chain: [ollama/a]\n'), 'unknown on_all_unhealthy "${MYKEY}"'],
      [withLongForm('    chain: ["\${MYKEY}"]\n'), 'line 3 (alias mana/long-form): target ${MYKEY}: ${VAR} is not expanded in a target'],
      [withLongForm('    chain: ["\${MYKEY}/m"]\n'), 'target ${MYKEY}/m: ${VAR} is not expanded in a target'],
      [withLongForm('    chain:\n      - { target: "ollama/\${MYKEY}", weight: 2 }\n'), 'line 4 (alias mana/long-form): target ollama/${MYKEY}: ${VAR} is not expanded'],
      [`providers:\n  vllm: { type: openai, base_url: http://x, headers: { X-Key: "\${MYKEY}\\r\\n" } }\n${STRINGS_ONLY}`, 'line 2: provider vllm header X-Key must be one line'],
      [withLongForm('    fail_over_on_empty: "\${MYKEY}"\n    chain: [ollama/a]\n'), 'fail_over_on_empty must be true or false'],
      [`settings: { retries: "\${MYKEY}" }\n${STRINGS_ONLY}`, 'settings.retries must be a whole number'],
      [`settings: { probe_interval: "\${MYKEY}" }\n${STRINGS_ONLY}`, 'settings.probe_interval must be a positive duration'],
    ];
    for (const [text, expected] of cases) {
      const message = parseError(text, secret);
      expect(message).toContain(expected);
      expect(message).not.toContain('sk-live');
      expect(message).not.toContain('0123456789');
    }
  });

  it('never puts an api key into a message', () => {
    const message = parseError(`providers:\n  groq: { api_key: "\${GROQ_API_KEY}", base_url: "not a url" }\n${STRINGS_ONLY}`);
    expect(message).not.toContain('gsk-secret');
  });
});

import { parseConfig } from '@mana/llm-router';
import { describe, expect, it } from 'vitest';
import type { FinishedRequest } from '../finished-request.js';
import { GatewayMetrics, OTHER_TARGET_LABEL, reasonLabel } from './metrics.js';

/** A non-streamed chat request that `target` answered (or rejected) with `status`, under `alias` (undefined: named directly). */
function finished(alias: string | undefined, target: string, status = 200): FinishedRequest {
  return {
    requestId: 'r1',
    method: 'POST',
    path: '/v1/chat/completions',
    status,
    durationMs: 10,
    api: 'chat_completions',
    code: undefined,
    model: undefined,
    namedAlias: undefined,
    stream: false,
    priority: undefined,
    outcome: { alias, target, attempts: [], upstreamCalls: 1, retryAfterSeconds: undefined },
    tokenUsage: undefined,
    ttfbMs: 5,
    firstTokenMs: undefined,
    caller: null,
    traceId: undefined,
  };
}

const CONFIG = parseConfig(
  'providers:\n  local: { type: ollama, base_url: "http://127.0.0.1:1" }\n  cloud: { type: openai, base_url: "http://127.0.0.1:2/v1", api_key_required: false }\n' +
    'aliases:\n' +
    ['mana/fast-text', 'mana/long-form', 'mana/structured', 'mana/reasoning', 'mana/vision'].map((a) => `  ${a}: [local/m1, cloud/m2]\n`).join('') +
    '  mana/embed: { kind: embedding, embedding_space: s, chain: [local/e1] }\n',
);

describe('GatewayMetrics', () => {
  it('exposes the documented metric names', async () => {
    const m = new GatewayMetrics({ defaultMetrics: false });
    m.labelTargetsOf(() => CONFIG);
    m.onAttempt({
      requestId: 'r1',
      alias: 'mana/fast-text',
      attempt: { target: 'local/m1', provider: 'local', model: 'm1', outcome: 'failed', reason: 'connect_refused', durationMs: 1, failedOver: true },
      nextTarget: 'cloud/m2',
    });
    m.onAttempt({
      requestId: 'r1',
      alias: 'mana/fast-text',
      attempt: { target: 'cloud/m2', provider: 'cloud', model: 'm2', outcome: 'ok', reason: 'ok', status: 200, durationMs: 3, failedOver: false },
      nextTarget: undefined,
    });
    m.requestStarted();
    m.requestFinished(finished('mana/fast-text', 'cloud/m2'));
    m.healthSource(() => [
      { provider: 'local', type: 'ollama', configured: true, unconfiguredReason: undefined, healthy: false, lastCheck: null, consecutiveFailures: 2, unhealthyUntil: null, lastError: 'refused' },
      { provider: 'cloud', type: 'openai', configured: true, unconfiguredReason: undefined, healthy: true, lastCheck: null, consecutiveFailures: 0, unhealthyUntil: null, lastError: null },
      { provider: 'fresh', type: 'openai', configured: true, unconfiguredReason: undefined, healthy: null, lastCheck: null, consecutiveFailures: 0, unhealthyUntil: null, lastError: null },
    ]);
    m.reloaded(false);
    const text = await m.text();
    expect(text).toContain('mana_llm_fallback_total{from_model="local/m1",to_model="cloud/m2",reason="connect_refused"} 1');
    expect(text).toContain('mana_llm_attempts_total{target="local/m1",outcome="failed"} 1');
    expect(text).toContain('mana_llm_attempts_total{target="cloud/m2",outcome="ok"} 1');
    expect(text).toContain('mana_llm_requests_total{api="chat_completions",alias="mana/fast-text",target="cloud/m2",status="200"} 1');
    expect(text).toContain('mana_llm_alias_resolved_total{alias="mana/fast-text",target="cloud/m2"} 1');
    expect(text).toContain('mana_llm_provider_healthy{provider="local"} 0');
    expect(text).toContain('mana_llm_provider_healthy{provider="cloud"} 1');
    expect(text).not.toContain('mana_llm_provider_healthy{provider="fresh"}');
    expect(text).toContain('mana_llm_config_reload_total{result="failure"} 1');
    expect(text).toContain('mana_llm_config_reload_total{result="success"} 0');
    expect(text).toContain('mana_llm_request_duration_seconds_count{api="chat_completions",alias="mana/fast-text",stream="false"} 1');
    expect(text).toContain('mana_llm_time_to_first_byte_seconds_bucket');
    expect(text).toContain('mana_llm_in_flight_requests 0');
  });

  it('labels targets only with ids from the config: any other direct id counts under one value', async () => {
    const m = new GatewayMetrics({ defaultMetrics: false });
    m.labelTargetsOf(() => CONFIG);
    for (let i = 0; i < 100; i++) {
      const target = `cloud/caller-chosen-${i}`;
      m.onAttempt({
        requestId: `r${i}`,
        alias: undefined,
        attempt: { target, provider: 'cloud', model: target.slice(6), outcome: 'failed', reason: 'http_500', durationMs: 1, failedOver: true },
        nextTarget: `cloud/next-${i}`,
      });
      m.requestStarted();
      m.requestFinished(finished(undefined, target));
    }
    m.requestStarted();
    m.requestFinished(finished(undefined, 'cloud/m2'));
    const text = await m.text();
    expect(text).not.toContain('caller-chosen');
    expect(text).toContain(`mana_llm_attempts_total{target="${OTHER_TARGET_LABEL}",outcome="failed"} 100`);
    expect(text).toContain(`mana_llm_fallback_total{from_model="${OTHER_TARGET_LABEL}",to_model="${OTHER_TARGET_LABEL}",reason="http_500"} 100`);
    expect(text).toContain(`mana_llm_requests_total{api="chat_completions",alias="direct",target="${OTHER_TARGET_LABEL}",status="200"} 100`);
    expect(text).toContain(`mana_llm_alias_resolved_total{alias="direct",target="${OTHER_TARGET_LABEL}"} 100`);
    // A direct id that an alias chain names keeps its own label.
    expect(text).toContain('mana_llm_requests_total{api="chat_completions",alias="direct",target="cloud/m2",status="200"} 1');
  });

  it('counts across scrapes: each scrape shows every request so far, a series added to by 0 shows 0', async () => {
    const m = new GatewayMetrics({ defaultMetrics: false });
    m.labelTargetsOf(() => CONFIG);
    const finish = (status: number): void => {
      m.requestStarted();
      m.requestFinished(finished('mana/fast-text', 'cloud/m2', status));
    };
    const record = (prompt: number) =>
      ({ attempts: [{ target: 'cloud/m2', promptTokens: prompt, completionTokens: 2, costUsd: null }] }) as unknown as Parameters<GatewayMetrics['usageRecorded']>[1];
    finish(200);
    m.usageRecorded(finished('mana/fast-text', 'cloud/m2'), record(0));
    let text = await m.text();
    expect(text).toContain('mana_llm_requests_total{api="chat_completions",alias="mana/fast-text",target="cloud/m2",status="200"} 1');
    expect(text).toContain('mana_llm_tokens_total{alias="mana/fast-text",target="cloud/m2",kind="prompt"} 0');
    finish(200);
    finish(200);
    finish(502);
    m.usageRecorded(finished('mana/fast-text', 'cloud/m2'), record(7));
    text = await m.text();
    expect(text).toContain('mana_llm_requests_total{api="chat_completions",alias="mana/fast-text",target="cloud/m2",status="200"} 3');
    expect(text).toContain('mana_llm_requests_total{api="chat_completions",alias="mana/fast-text",target="cloud/m2",status="502"} 1');
    expect(text).toContain('mana_llm_alias_resolved_total{alias="mana/fast-text",target="cloud/m2"} 3');
    expect(text).toContain('mana_llm_tokens_total{alias="mana/fast-text",target="cloud/m2",kind="prompt"} 7');
    expect(text).toContain('mana_llm_tokens_total{alias="mana/fast-text",target="cloud/m2",kind="completion"} 4');
    expect(text).toContain('mana_llm_request_duration_seconds_count{api="chat_completions",alias="mana/fast-text",stream="false"} 4');
    expect(await m.text()).toBe(text); // a scrape changes nothing
  });

  it('keeps reason labels bounded', () => {
    expect(reasonLabel('unconfigured: missing api key (GROQ_API_KEY)')).toBe('unconfigured');
    expect(reasonLabel('http_503')).toBe('http_503');
  });
});

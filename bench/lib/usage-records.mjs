// Usage records as the gateway hands them to the store, for the store's benchmarks:
// 10 % rescued by failover, 2 % failed, the rest answered by their first target.
import { randomUUID } from 'node:crypto';

const ALIASES = ['mana/fast-text', 'mana/long-form', 'mana/structured', 'mana/reasoning', 'mana/vision'];
const TARGETS = [
  ['groq', 'llama-3.1-8b-instant'],
  ['openrouter', 'anthropic/claude-3.5-haiku'],
  ['together', 'meta-llama/Llama-3.3-70B'],
  ['ollama', 'gemma3:4b'],
  ['ollama', 'qwen3:8b'],
  ['google', 'gemini-2.0-flash'],
];

/** A small deterministic generator: the same data every run. */
export function lcg(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

export function makeRecord(random, now) {
  const alias = ALIASES[Math.floor(random() * ALIASES.length)];
  const pick = () => TARGETS[Math.floor(random() * TARGETS.length)];
  const roll = random();
  const attemptOf = (position, [provider, model], over) => ({
    position,
    target: `${provider}/${model}`,
    provider,
    model,
    outcome: 'ok',
    reason: 'ok',
    upstreamStatus: 200,
    durationMs: 50 + random() * 2_000,
    promptTokens: Math.floor(random() * 2_000),
    completionTokens: Math.floor(random() * 600),
    cachedTokens: null,
    costUsd: random() * 0.002,
    failedOver: false,
    ...over,
  });
  const failed = { outcome: 'failed', reason: 'http_503', upstreamStatus: 503, promptTokens: null, completionTokens: null, costUsd: null };
  let attempts;
  let status = 200;
  if (roll < 0.1) attempts = [attemptOf(0, pick(), { ...failed, failedOver: true }), attemptOf(1, pick())];
  else if (roll < 0.12) {
    attempts = [attemptOf(0, pick(), { ...failed, failedOver: true }), attemptOf(1, pick(), failed)];
    status = 502;
  } else attempts = [attemptOf(0, pick())];
  const final = attempts.at(-1);
  return {
    requestId: randomUUID(),
    time: now,
    keyFingerprint: 'k:bench',
    alias,
    model: alias,
    target: final.target,
    provider: final.provider,
    status,
    code: status === 200 ? null : 'all_targets_failed',
    stream: random() < 0.5,
    priority: null,
    attemptCount: attempts.length,
    plan: attempts.map((a) => ({ target: a.target, outcome: a.outcome, reason: a.reason })),
    durationMs: attempts.reduce((n, a) => n + a.durationMs, 0),
    ttfbMs: 40 + random() * 800,
    promptTokens: final.promptTokens,
    completionTokens: final.completionTokens,
    cachedTokens: null,
    costUsd: attempts.reduce((n, a) => (a.costUsd === null ? n : (n ?? 0) + a.costUsd), null),
    attempts,
    replica: null,
  };
}


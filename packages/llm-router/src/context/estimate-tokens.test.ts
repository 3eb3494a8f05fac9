/**
 * The estimator against real tokenizers (test-only yardsticks, bundled
 * vocabularies, no network): o200k (gpt-tokenizer) and Llama 3
 * (llama3-tokenizer-js), on the shipped corpus in fixtures/corpus — English
 * and German prose written for it, TypeScript (a copy of this package's
 * stream-commit.ts), Python, YAML and JSON.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import llama3Tokenizer from 'llama3-tokenizer-js';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../config/defaults.js';
import type { ChatRequestBody, TargetConfig } from '../types.js';
import { ContextFit } from './context-fit.js';
import { estimateTokens } from './estimate-tokens.js';
import { MESSAGE_OVERHEAD, REPLY_OVERHEAD } from './request-tokens.js';

const CORPUS = new URL('./fixtures/corpus/', import.meta.url);
const files = readdirSync(CORPUS)
  .sort()
  .map((name) => ({ name, text: readFileSync(new URL(name, CORPUS), 'utf8') }));

const o200k = (text: string): number => encode(text).length;
const llama3 = (text: string): number => llama3Tokenizer.encode(text, { bos: false, eos: false }).length;

/** Whole files, and 600-character windows every 300 characters (short prompts are where ratios swing most). */
const samples = files.flatMap(({ name, text }) => {
  const out = [{ name, text }];
  for (let i = 0; i + 300 <= text.length; i += 300) out.push({ name: `${name}@${i}`, text: text.slice(i, i + 600) });
  return out;
});

function stats(count: (text: string) => number) {
  const ratios = samples.map((s) => estimateTokens(s.text) / count(s.text));
  const meanAbs = ratios.reduce((sum, r) => sum + Math.abs(r - 1), 0) / ratios.length;
  return { meanAbs, max: Math.max(...ratios), min: Math.min(...ratios) };
}

describe('estimateTokens against real tokenizers', () => {
  it('per file: the figures docs/api/chat.md states', () => {
    const rows = files.map(({ name, text }) => {
      const est = estimateTokens(text);
      return { file: name, chars: text.length, o200k: o200k(text), llama3: llama3(text), estimate: est };
    });
    console.table(rows.map((r) => ({ ...r, 'vs o200k': `${(((r.estimate - r.o200k) / r.o200k) * 100).toFixed(1)}%`, 'vs llama3': `${(((r.estimate - r.llama3) / r.llama3) * 100).toFixed(1)}%` })));
    const total = (key: 'o200k' | 'llama3' | 'estimate') => rows.reduce((sum, r) => sum + r[key], 0);
    const overall = total('estimate') / total('o200k');
    expect(overall).toBeGreaterThan(0.9);
    expect(overall).toBeLessThan(1.02);
  });

  it('o200k: mean error within 7%, never more than 6% over, at most 25% under (600-character samples and whole files)', () => {
    const s = stats(o200k);
    console.log(`o200k: mean |error| ${(s.meanAbs * 100).toFixed(1)}%, range ${((s.min - 1) * 100).toFixed(1)}% … +${((s.max - 1) * 100).toFixed(1)}%`);
    expect(s.meanAbs).toBeLessThan(0.07);
    expect(s.max).toBeLessThan(1.06);
    expect(s.min).toBeGreaterThan(0.75);
  });

  it('Llama 3: never more than 6% over (German prose is underestimated: its tokenizer splits German finer)', () => {
    const s = stats(llama3);
    console.log(`llama3: mean |error| ${(s.meanAbs * 100).toFixed(1)}%, range ${((s.min - 1) * 100).toFixed(1)}% … +${((s.max - 1) * 100).toFixed(1)}%`);
    expect(s.max).toBeLessThan(1.06);
    expect(s.meanAbs).toBeLessThan(0.12);
  });

  it('never skips a target that the tokenizer says fits with 10% to spare', () => {
    const target = (window: number): TargetConfig => ({
      id: 'local/m',
      provider: 'local',
      model: 'm',
      weight: 1,
      settings: DEFAULT_SETTINGS,
      price: undefined,
      contextWindow: window,
    });
    // Single-message requests of every sample, and multi-message conversations of whole files.
    const requests: ChatRequestBody[] = [
      ...samples.map((s) => ({ messages: [{ role: 'user', content: s.text }], max_tokens: 256 })),
      { messages: files.map((f, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: f.text })) },
      { messages: [{ role: 'system', content: files[0]!.text }, { role: 'user', content: [{ type: 'text', text: files[1]!.text }] }], max_tokens: 1000 },
    ];
    for (const count of [o200k, llama3]) {
      for (const body of requests) {
        const messages = body.messages as { content: string | { text: string }[] }[];
        const text = messages.map((m) => (typeof m.content === 'string' ? m.content : m.content.map((p) => p.text).join(''))).join('');
        const real = count(text) + messages.length * MESSAGE_OVERHEAD + REPLY_OVERHEAD;
        const answer = typeof body.max_tokens === 'number' ? body.max_tokens : DEFAULT_SETTINGS.contextReserve;
        const window = Math.ceil((real + answer) / 0.9); // fits with 10 % of the window to spare
        expect(new ContextFit(body).check(target(window))).toBeUndefined();
      }
    }
  });
});

describe('estimateTokens', () => {
  it('counts nothing for nothing and never more than the text has code units', () => {
    expect(estimateTokens('')).toBe(0);
    const alphabet = 'aZ9 \n\t.;{}äßÜ€中文😀-_/"\'';
    let seed = 7;
    for (let n = 0; n < 500; n++) {
      let text = '';
      const length = n % 60;
      for (let i = 0; i < length; i++) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        text += alphabet[seed % alphabet.length];
      }
      expect(estimateTokens(text)).toBeLessThanOrEqual(text.length);
    }
  });

  it('splits camelCase, groups digits by three, keeps emoji as one', () => {
    expect(estimateTokens('readUntilCommit')).toBe(3);
    expect(estimateTokens('1234567')).toBe(3);
    expect(estimateTokens('😀')).toBe(1);
    expect(estimateTokens(' the cat')).toBe(2);
  });

  it('1 MB of mixed text takes well under a second (linear; see bench/ for the figure)', () => {
    const corpus = files.map((f) => f.text).join('\n');
    const text = corpus.repeat(Math.ceil(1_048_576 / corpus.length)).slice(0, 1_048_576);
    const started = performance.now();
    const tokens = estimateTokens(text);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(tokens).toBeGreaterThan(200_000);
  });
});

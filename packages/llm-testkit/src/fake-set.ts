/**
 * The fake upstreams of a suite as one value: started by name and dialect,
 * written into a gateway config as provider lines, closed together. What the
 * gateway's e2e tests and the dashboard's browser tests would otherwise each
 * spell out (a variable, a start and a close per fake).
 */
import { startFakeOllama } from './fake-ollama.js';
import { startFakeOpenAI } from './fake-openai.js';
import type { FakeUpstream } from './types.js';

/** A fake's dialect: the one it speaks, and the provider `type` a config gives it. */
export type FakeKind = FakeUpstream['kind'];

/** Fake upstreams by name. */
export type Fakes<Name extends string = string> = { readonly [N in Name]: FakeUpstream };

/**
 * Starts one fake per entry, in order, each of its dialect and named for its
 * key (the name its default answers carry). If one fails to start, those
 * already started are closed.
 */
export async function startFakes<const Kinds extends Readonly<Record<string, FakeKind>>>(kinds: Kinds): Promise<Fakes<keyof Kinds & string>> {
  const started: Record<string, FakeUpstream> = {};
  try {
    for (const [name, kind] of Object.entries(kinds)) {
      started[name] = kind === 'ollama' ? await startFakeOllama({ name }) : await startFakeOpenAI({ name });
    }
  } catch (error) {
    await closeFakes(started);
    throw error;
  }
  return started as Fakes<keyof Kinds & string>;
}

/** Closes every fake; `undefined` (a suite whose set-up failed before starting them) is nothing to close. */
export async function closeFakes(fakes: Partial<Fakes> | undefined): Promise<void> {
  await Promise.all(Object.values(fakes ?? {}).map((fake) => fake?.close()));
}

/**
 * One provider line per fake (YAML, under `providers:`), named by its key,
 * typed by the fake's dialect and needing no API key:
 * `  ok: { type: openai, base_url: "http://127.0.0.1:PORT/v1", api_key_required: false }`.
 */
export function providersYaml(fakes: Fakes): string {
  return Object.entries(fakes)
    .map(([name, fake]) => `  ${name}: { type: ${fake.kind}, base_url: "${fake.baseUrl}", api_key_required: false }\n`)
    .join('');
}

/**
 * What the Responses e2e suites check of every answer of `/v1/responses`,
 * however it was read (the wire's SSE frames or an SDK's events): that it
 * conforms to OpenAI's published spec, and that a stream is one consistent
 * story — `sequence_number` counting up from 0, one response id, and every
 * item id, `call_id` and `output_index` in its events the same as in the
 * final response (where other bridges break multi-turn tool calls).
 */
import { expect } from 'vitest';
import type { FakeUpstream } from '@mana/llm-testkit';
import type { Json } from './harness.js';
import { specViolations } from './openai-spec.js';

/** The chat request a fake got last: what the codec made of the Responses request (the router's dialect). */
export const lastSent = (fake: FakeUpstream): Json => fake.requests.at(-1)!.body;

/** `value` conforms to the spec's schema `name` (`Response`, `ResponseStreamEvent`, `ErrorResponse`). */
export function expectConforms(name: string, value: unknown, what: string): void {
  expect(specViolations(name, value), `${what}: ${JSON.stringify(value).slice(0, 2_000)}`).toEqual([]);
}

/** The events as `type` or `type output_index` (item events), in order. */
export const eventSequence = (events: readonly Json[]): string[] =>
  events.map((e) => (typeof e.output_index === 'number' ? `${e.type} ${e.output_index}` : e.type));

/** OpenAI's event sequence of a response that is one message of `deltas` text deltas, up to its terminal event. */
export const textEvents = (deltas: number): string[] => [
  'response.created',
  'response.in_progress',
  'response.output_item.added 0',
  'response.content_part.added 0',
  ...Array.from({ length: deltas }, () => 'response.output_text.delta 0'),
  'response.output_text.done 0',
  'response.content_part.done 0',
  'response.output_item.done 0',
];

/** OpenAI's event sequence of a completed response that is one function call, its arguments in one delta. */
export const FUNCTION_CALL_EVENTS: readonly string[] = [
  'response.created',
  'response.in_progress',
  'response.output_item.added 0',
  'response.function_call_arguments.delta 0',
  'response.function_call_arguments.done 0',
  'response.output_item.done 0',
  'response.completed',
];

/** Lifecycle events: they carry the whole response. */
const LIFECYCLE = new Set(['response.created', 'response.in_progress', 'response.completed', 'response.incomplete', 'response.failed']);

/**
 * The final response of a stream (`response.completed` or `response.incomplete`)
 * after checking the whole stream against it and against the spec: numbering,
 * the one response id, each event's item found at its `output_index` with the
 * same id (and `call_id`), deltas adding up to the final text and arguments.
 */
export function expectConsistentStream(events: readonly Json[]): Json {
  expect(events.length).toBeGreaterThan(3);
  for (const [i, event] of events.entries()) expectConforms('ResponseStreamEvent', event, `event ${i} (${event.type})`);
  const numbers = events.map((e) => e.sequence_number);
  expect(numbers[0]).toBe(0);
  for (let i = 1; i < numbers.length; i++) expect(numbers[i], `sequence_number of event ${i}`).toBeGreaterThan(numbers[i - 1]);

  expect(eventSequence(events.slice(0, 2))).toEqual(['response.created', 'response.in_progress']);
  const last = events.at(-1)!;
  expect(['response.completed', 'response.incomplete']).toContain(last.type);
  const final = last.response;
  expectConforms('Response', final, 'the final response');
  for (const event of events.filter((e) => LIFECYCLE.has(e.type))) {
    expect(event.response.id, `${event.type}: response id`).toBe(final.id);
    expect(event.response.created_at).toBe(final.created_at);
    expect(event.response.model).toBe(final.model);
  }
  expect(events[0].response).toMatchObject({ status: 'in_progress', output: [] });

  const text = new Map<string, string>();
  const args = new Map<string, string>();
  for (const event of events) {
    if (typeof event.output_index !== 'number') continue;
    const item = final.output[event.output_index];
    expect(item, `${event.type}: no output item ${event.output_index} in the final response`).toBeDefined();
    const id = event.item?.id ?? event.item_id;
    expect(id, `${event.type} ${event.output_index}: item id`).toBe(item.id);
    if (event.item !== undefined) {
      expect(event.item.type).toBe(item.type);
      if (item.type === 'function_call') expect(event.item, `${event.type}: the call`).toMatchObject({ call_id: item.call_id, name: item.name });
    }
    // The item as done is the item of the final response.
    if (event.type === 'response.output_item.done') expect(event.item).toEqual(item);
    if (event.type === 'response.output_text.delta') text.set(`${id} ${event.content_index}`, (text.get(`${id} ${event.content_index}`) ?? '') + event.delta);
    if (event.type === 'response.output_text.done') expect(event.text).toBe(item.content[event.content_index].text);
    if (event.type === 'response.function_call_arguments.delta') args.set(id, (args.get(id) ?? '') + event.delta);
    if (event.type === 'response.function_call_arguments.done') expect(event.arguments).toBe(item.arguments);
  }
  for (const [key, joined] of text) {
    const [id, index] = key.split(' ') as [string, string];
    expect(joined, `the text deltas of ${key}`).toBe(final.output.find((o: Json) => o.id === id).content[Number(index)].text);
  }
  for (const [id, joined] of args) expect(joined, `the argument deltas of ${id}`).toBe(final.output.find((o: Json) => o.id === id).arguments);
  // Each item is announced once, in output order, and done once.
  const added = events.filter((e) => e.type === 'response.output_item.added').map((e) => e.output_index);
  expect(added).toEqual(final.output.map((_: Json, i: number) => i));
  expect(events.filter((e) => e.type === 'response.output_item.done').map((e) => e.output_index)).toEqual(added);
  return final;
}

/** The text of a response's message items, as the SDK's `output_text` joins it. */
export const outputText = (response: Json): string =>
  response.output
    .filter((o: Json) => o.type === 'message')
    .flatMap((o: Json) => o.content.filter((c: Json) => c.type === 'output_text').map((c: Json) => c.text))
    .join('');

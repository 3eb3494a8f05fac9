import { describe, expect, it } from 'vitest';
import { OpenAIStreamDecoder } from './openai-stream.js';
import { SAFE_TOOL_CALL_ID, ToolCallIds, safeToolCallId } from './tool-call-ids.js';

const HOSTILE = 'call<script>\u0007\n"x"';
const LONG = `call_${'a'.repeat(80)}`;

describe('safeToolCallId', () => {
  it('keeps a safe id and rewrites one a next turn would refuse, the same way every time', () => {
    expect(safeToolCallId('call_abc-123')).toBe('call_abc-123');
    const hostile = safeToolCallId(HOSTILE);
    expect(hostile).toMatch(SAFE_TOOL_CALL_ID);
    expect(hostile).toMatch(/^callscriptx_[0-9a-f]{12}$/);
    expect(safeToolCallId(HOSTILE)).toBe(hostile);
    const long = safeToolCallId(LONG);
    expect(long).toHaveLength(40);
    expect(long).toMatch(SAFE_TOOL_CALL_ID);
    // Two ids that differ only past the kept prefix still differ.
    expect(safeToolCallId(`${LONG}b`)).not.toBe(long);
    expect(safeToolCallId('<>')).toMatch(/^call_[0-9a-f]{12}$/);
  });
});

describe('ToolCallIds', () => {
  it('a completion: repeated ids become unique, safe ones untouched, the body the same object when nothing changes', () => {
    const calls = (...ids: string[]) => ({ choices: [{ index: 0, message: { role: 'assistant', tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })) } }] });
    const clean = calls('a', 'b');
    expect(new ToolCallIds().completion(clean)).toBe(clean);
    const fixed = new ToolCallIds().completion(calls('dup', 'dup', HOSTILE)) as ReturnType<typeof calls>;
    const ids = fixed.choices[0]!.message.tool_calls.map((c) => c.id);
    expect(ids[0]).toBe('dup');
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(SAFE_TOOL_CALL_ID);
    // Deterministic: the same answer gets the same ids.
    const again = new ToolCallIds().completion(calls('dup', 'dup', HOSTILE)) as ReturnType<typeof calls>;
    expect(again.choices[0]!.message.tool_calls.map((c) => c.id)).toEqual(ids);
  });

  it('a stream: a call that repeats its id in later deltas keeps one id; another call with that id gets its own', () => {
    const decoder = new OpenAIStreamDecoder();
    const chunk = (calls: object[]) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: calls } }] })}\n\n`;
    const text =
      chunk([{ index: 0, id: 'dup', function: { name: 'f', arguments: '' } }]) +
      chunk([{ index: 0, id: 'dup', function: { arguments: '{}' } }]) +
      chunk([{ index: 1, id: 'dup', function: { name: 'g', arguments: '{}' } }]) +
      chunk([{ index: 2, id: HOSTILE, function: { name: 'h', arguments: '{}' } }]) +
      'data: [DONE]\n\n';
    const events = decoder.push(new TextEncoder().encode(text));
    const ids = events.flatMap((e) => (e.type === 'chunk' ? [(JSON.parse(e.data) as { choices: { delta: { tool_calls: { id: string }[] } }[] }).choices[0]!.delta.tool_calls[0]!.id] : []));
    expect(ids[0]).toBe('dup');
    expect(ids[1]).toBe('dup');
    expect(ids[2]).not.toBe('dup');
    expect(ids[3]).toBe(safeToolCallId(HOSTILE));
    for (const id of ids) expect(id).toMatch(SAFE_TOOL_CALL_ID);
  });
});

/**
 * The Messages decoder on what the e2e suites do not send: tool choices,
 * error results and images inside tool results, the client's own request
 * kept beside the translation for a target that speaks Messages.
 */
import { describe, expect, it } from 'vitest';
import type { ChatRequestBody } from '@mana/llm-router';
import type { ReadBody } from '../codec.js';
import { scanJsonText } from '../../http/json-depth.js';
import { decodeCountTokensRequest, decodeMessagesRequest } from './decode-messages.js';

function read(value: unknown): ReadBody {
  const text = JSON.stringify(value);
  return { kind: 'json', text, value, scan: scanJsonText(text, 64) };
}

const decode = (value: Record<string, unknown>) => decodeMessagesRequest(value, read(value));

const PNG = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } };
const CALL = { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } }] };

describe('decodeMessagesRequest', () => {
  it.each([
    [{ type: 'auto' }, { tool_choice: 'auto' }],
    [{ type: 'any' }, { tool_choice: 'required' }],
    [{ type: 'none' }, { tool_choice: 'none' }],
    [{ type: 'tool', name: 'f' }, { tool_choice: { type: 'function', function: { name: 'f' } } }],
    [{ type: 'auto', disable_parallel_tool_use: true }, { tool_choice: 'auto', parallel_tool_calls: false }],
  ])('tool_choice %j → %j', (choice, expected) => {
    const decoded = decode({ max_tokens: 5, messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'f', input_schema: { type: 'object' } }], tool_choice: choice });
    expect(decoded.ok && decoded.body).toMatchObject(expected);
  });

  it("Anthropic's own tools stay out of the translation, named for the router: server tools droppable, the client-run ones and a forced one not", () => {
    const custom = { name: 'f', input_schema: { type: 'object' } };
    const search = { type: 'web_search_20250305', name: 'web_search', max_uses: 2 };
    const bash = { type: 'bash_20250124', name: 'bash' };
    const decoded = decode({ max_tokens: 5, messages: [{ role: 'user', content: 'x' }], tools: [search, custom, bash], tool_choice: { type: 'auto' } });
    expect(decoded.ok && decoded.body).toMatchObject({ tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], tool_choice: 'auto' });
    expect(decoded.ok && decoded.nativeOnly).toEqual([
      { param: 'tools[0].type', name: 'web_search_20250305', droppable: true },
      { param: 'tools[2].type', name: 'bash_20250124', droppable: false },
    ]);
    // The client's own request keeps them, for a target that takes it natively.
    expect(decoded.ok && decoded.original?.body.tools).toEqual([search, custom, bash]);
    const forced = decode({ max_tokens: 5, messages: [{ role: 'user', content: 'x' }], tools: [search, custom], tool_choice: { type: 'tool', name: 'web_search' } });
    expect(forced.ok && forced.nativeOnly).toEqual([{ param: 'tools[0].type', name: 'web_search_20250305', droppable: false }]);
    const only = decode({ max_tokens: 5, messages: [{ role: 'user', content: 'x' }], tools: [search], tool_choice: { type: 'any' } });
    expect(only.ok && only.body).not.toHaveProperty('tool_choice');
    expect(only.ok && only.body).not.toHaveProperty('tools');
    expect(only.ok && only.nativeOnly).toEqual([{ param: 'tools[0].type', name: 'web_search_20250305', droppable: false }]);
    const bad = decode({ max_tokens: 5, messages: [{ role: 'user', content: 'x' }], tools: [{ type: 7, name: 'x' }] });
    expect(!bad.ok && bad.error).toMatchObject({ code: 'invalid_type', param: 'tools[0].type' });
  });

  it("a server tool's earlier call and results, and a document, stay out of the translation, named after the tools; a turn of only such blocks is no message", () => {
    const searched = {
      role: 'assistant',
      content: [
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'node 20' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
        { type: 'text', text: 'Node 20 added a permission model.' },
      ],
    };
    const onlySearch = { role: 'assistant', content: searched.content.slice(0, 2) };
    const decoded = decode({
      max_tokens: 5,
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      messages: [
        { role: 'user', content: 'What changed?' },
        searched,
        { role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } }, { type: 'text', text: 'And this?' }] },
        onlySearch,
        { role: 'user', content: 'Thanks.' },
      ],
    });
    expect(decoded.ok && decoded.body.messages).toEqual([
      { role: 'user', content: 'What changed?' },
      { role: 'assistant', content: 'Node 20 added a permission model.' },
      { role: 'user', content: 'And this?' },
      { role: 'user', content: 'Thanks.' },
    ]);
    expect(decoded.ok && decoded.nativeOnly).toEqual([
      { param: 'tools[0].type', name: 'web_search_20250305', droppable: true },
      { param: 'messages[1].content[0].type', name: 'server_tool_use', droppable: true },
      { param: 'messages[1].content[1].type', name: 'web_search_tool_result', droppable: true },
      { param: 'messages[2].content[0].type', name: 'document', droppable: false },
      { param: 'messages[3].content[0].type', name: 'server_tool_use', droppable: true },
      { param: 'messages[3].content[1].type', name: 'web_search_tool_result', droppable: true },
    ]);
  });

  it('an error result says so in its text; images in a result follow the tool messages in a user message', () => {
    const decoded = decode({
      max_tokens: 5,
      messages: [
        { role: 'user', content: 'x' },
        { ...CALL, content: [...CALL.content, { type: 'tool_use', id: 't2', name: 'f', input: {} }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: 'no such file', is_error: true },
            { type: 'tool_result', tool_use_id: 't2', content: [{ type: 'text', text: 'see' }, PNG] },
            { type: 'text', text: 'and?' },
          ],
        },
      ],
    });
    expect(decoded.ok && (decoded.body as ChatRequestBody).messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 't1', content: 'Error: no such file' },
      { role: 'tool', tool_call_id: 't2', content: 'see' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }, { type: 'text', text: 'and?' }] },
    ]);
  });

  it('a tool_result must answer the message right before it, not an older one', () => {
    const decoded = decode({
      max_tokens: 5,
      messages: [{ role: 'user', content: 'x' }, CALL, { role: 'user', content: 'more' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1' }] }],
    });
    expect(decoded).toMatchObject({ ok: false, error: { code: 'invalid_request', param: 'messages[4].content[0].tool_use_id' } });
  });

  it("keeps the client's request as written (thinking, cache_control) beside a translation without them", () => {
    const body = { model: 'mana/reasoning', max_tokens: 5, thinking: { type: 'enabled', budget_tokens: 1024 }, system: [{ type: 'text', text: 's', cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: 'x' }] };
    const decoded = decode(body);
    if (!decoded.ok) throw new Error('expected a decoded request');
    expect(decoded.body).toEqual({ messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'x' }], stream: false, max_tokens: 5 });
    expect(decoded.original).toMatchObject({ protocol: 'anthropic', body });
    const span = decoded.original!.bodyText!;
    expect(span.text.slice(span.modelStart, span.modelEnd)).toBe('"mana/reasoning"');
  });

  it('count_tokens takes a request without max_tokens; messages needs it', () => {
    const body = { messages: [{ role: 'user', content: 'x' }] };
    expect(decodeCountTokensRequest(body, read(body)).ok).toBe(true);
    expect(decode(body)).toMatchObject({ ok: false, error: { param: 'max_tokens' } });
  });

  it('thinking blocks of earlier turns are dropped; an image in an assistant turn is refused', () => {
    const dropped = decode({ max_tokens: 5, messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }, { type: 'text', text: 'ok' }] }, { role: 'user', content: 'y' }] });
    expect(dropped.ok && (dropped.body as ChatRequestBody).messages[1]).toEqual({ role: 'assistant', content: 'ok' });
    expect(decode({ max_tokens: 5, messages: [{ role: 'assistant', content: [PNG] }] })).toMatchObject({ ok: false, error: { param: 'messages[0].content[0].type' } });
  });
});

/**
 * The Responses decoder: every input item and content type it translates,
 * the chat request each becomes (what the upstream receives), what the answer
 * repeats of the request, and every refusal with the field it names.
 */
import { describe, expect, it } from 'vitest';
import type { ChatRequestBody } from '@mana/llm-router';
import { decodeResponsesRequest } from './decode-responses.js';

type Json = Record<string, unknown>;

function ok(body: Json) {
  const decoded = decodeResponsesRequest(body);
  if (!decoded.ok) throw new Error(`refused: ${decoded.error.code} ${decoded.error.message}`);
  return { ...decoded, chat: decoded.body as ChatRequestBody };
}

function refused(body: unknown) {
  const decoded = decodeResponsesRequest(body);
  if (decoded.ok) throw new Error('decoded where a refusal was expected');
  return decoded.error;
}

const CALL = { type: 'function_call', call_id: 'call_a', name: 'weather', arguments: '{"city":"Oslo"}' };

describe('decodeResponsesRequest: input', () => {
  it('a string input is one user message; instructions lead as a system message; model and stream are kept', () => {
    const d = ok({ model: 'mana/fast-text', input: 'Hi', instructions: 'Be brief.', stream: true });
    expect(d.model).toBe('mana/fast-text');
    expect(d.stream).toBe(true);
    expect(d.chat).toEqual({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      stream: true,
    });
    expect(d.optionalParameters).toBeUndefined();
  });

  it('message items of each role and content type', () => {
    const d = ok({
      input: [
        { role: 'developer', content: 'Rules.' },
        { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'One' }, { type: 'input_text', text: 'Two' }] },
        { role: 'user', content: [{ type: 'input_text', text: 'Look' }, { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' }] },
        { role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' }] },
        { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'Seen', annotations: [] }] },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
        { role: 'user', content: [{ type: 'input_text', text: 'ok' }] },
      ],
    });
    expect(d.chat.messages).toEqual([
      { role: 'system', content: 'Rules.' },
      { role: 'system', content: 'One\nTwo' },
      { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } }] },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] },
      { role: 'assistant', content: 'Seen' },
      { role: 'assistant', content: 'No.' },
      { role: 'user', content: 'ok' },
    ]);
  });

  it('parallel function calls join one assistant message (after its text); each output becomes a tool message with the call id', () => {
    const d = ok({
      input: [
        { role: 'user', content: 'Weather in Oslo and Rome?' },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'opaque' },
        CALL,
        { type: 'function_call', id: 'fc_2', call_id: 'call_b', name: 'weather', arguments: '{"city":"Rome"}', status: 'completed' },
        { type: 'function_call_output', call_id: 'call_a', output: '12°C' },
        { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: '20' }, { type: 'input_text', text: '°C' }] },
      ],
    });
    expect(d.chat.messages).toEqual([
      { role: 'user', content: 'Weather in Oslo and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
          { id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '12°C' },
      { role: 'tool', tool_call_id: 'call_b', content: '20°C' },
    ]);
  });

  it('a function call without text before it is an assistant message of its own with null content', () => {
    const d = ok({ input: [{ role: 'user', content: 'x' }, CALL, { type: 'function_call_output', call_id: 'call_a', output: 'done' }, { role: 'user', content: 'again' }, { ...CALL, call_id: 'call_c' }] });
    expect(d.chat.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_a', content: 'done' },
      { role: 'user', content: 'again' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_c', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
    ]);
  });

  it.each([
    ['no input', {}, 'empty_input', 'input'],
    ['input of the wrong type', { input: 42 }, 'invalid_type', 'input'],
    ['an empty input list', { input: [] }, 'empty_input', 'input'],
    ['only reasoning items', { input: [{ type: 'reasoning', id: 'rs_1', summary: [] }] }, 'empty_input', 'input'],
    ['an item that is not an object', { input: ['hi'] }, 'invalid_type', 'input[0]'],
    ['an unknown item type', { input: [{ type: 'mystery' }] }, 'unsupported_request', 'input[0].type'],
    ['a built-in tool call', { input: [{ type: 'web_search_call', id: 'ws_1', status: 'completed' }] }, 'unsupported_request', 'input[0].type'],
    ['an item_reference', { input: [{ type: 'item_reference', id: 'msg_1' }] }, 'response_storage_not_supported', 'input[0]'],
    ['an item_reference without its type', { input: [{ id: 'msg_1' }] }, 'response_storage_not_supported', 'input[0]'],
    ['an unknown role', { input: [{ role: 'tool', content: 'x' }] }, 'invalid_request', 'input[0].role'],
    ['message content of the wrong type', { input: [{ role: 'user', content: 5 }] }, 'invalid_type', 'input[0].content'],
    ['an unknown content part', { input: [{ role: 'user', content: [{ type: 'input_video' }] }] }, 'invalid_request', 'input[0].content[0].type'],
    ['a file part', { input: [{ role: 'user', content: [{ type: 'input_file', file_data: 'x' }] }] }, 'unsupported_request', 'input[0].content[0].type'],
    ['an image in a system message', { input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'https://e.x/a.png' }] }] }, 'invalid_request', 'input[0].content[0].type'],
    ['output_text in a user message', { input: [{ role: 'user', content: [{ type: 'output_text', text: 'x' }] }] }, 'invalid_request', 'input[0].content[0].type'],
    ['an image by file id', { input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1', detail: 'auto' }] }] }, 'unsupported_request', 'input[0].content[0].file_id'],
    ['an image URL that is no URL', { input: [{ role: 'user', content: [{ type: 'input_image', image_url: '/etc/passwd', detail: 'auto' }] }] }, 'invalid_request', 'input[0].content[0].image_url'],
    ['text that is not a string', { input: [{ role: 'user', content: [{ type: 'input_text', text: 1 }] }] }, 'invalid_type', 'input[0].content[0].text'],
    ['a call without call_id', { input: [{ role: 'user', content: 'x' }, { type: 'function_call', name: 'f', arguments: '{}' }] }, 'invalid_type', 'input[1].call_id'],
    ['a call whose arguments are an object', { input: [{ role: 'user', content: 'x' }, { ...CALL, arguments: { city: 'Oslo' } }] }, 'invalid_type', 'input[1].arguments'],
    ['an output answering no call', { input: [{ role: 'user', content: 'x' }, CALL, { type: 'function_call_output', call_id: 'call_zzz', output: 'r' }] }, 'invalid_request', 'input[2].call_id'],
    ['an output before its call', { input: [{ role: 'user', content: 'x' }, { type: 'function_call_output', call_id: 'call_a', output: 'r' }, CALL] }, 'invalid_request', 'input[1].call_id'],
    ['an output with an image', { input: [CALL, { type: 'function_call_output', call_id: 'call_a', output: [{ type: 'input_image', image_url: 'https://e.x/a.png' }] }] }, 'invalid_request', 'input[1].output[0].type'],
  ])('%s → 400 %s naming %s', (_case, body, code, param) => {
    const error = refused(body);
    expect(error).toMatchObject({ code, param });
    expect(error.message.length).toBeGreaterThan(10);
  });

  it('the unmatched call id is named in the message, with what to send', () => {
    const error = refused({ input: [{ role: 'user', content: 'x' }, CALL, { type: 'function_call_output', call_id: 'call_zzz', output: 'r' }] });
    expect(error.message).toContain("'call_zzz'");
    expect(error.message).toContain('function_call');
  });
});

describe('decodeResponsesRequest: parameters', () => {
  it('sampling, max_output_tokens, user and metadata map to chat, and the answer repeats them', () => {
    const d = ok({ input: 'x', temperature: 0.2, top_p: 0.9, max_output_tokens: 300, user: 'u-1', metadata: { team: 'a' }, store: false, truncation: 'auto', include: ['reasoning.encrypted_content'] });
    expect(d.chat).toEqual({
      messages: [{ role: 'user', content: 'x' }],
      stream: false,
      temperature: 0.2,
      top_p: 0.9,
      max_completion_tokens: 300,
      user: 'u-1',
      metadata: { team: 'a' },
    });
    expect(d.echo).toEqual({
      instructions: null,
      temperature: 0.2,
      top_p: 0.9,
      max_output_tokens: 300,
      metadata: { team: 'a' },
      user: 'u-1',
      text: { format: { type: 'text' } },
      reasoning: null,
      tools: [],
      tool_choice: 'auto',
      parallel_tool_calls: true,
    });
  });

  it('what the request leaves out, the answer states as null or the default', () => {
    expect(ok({ input: 'x' }).echo).toMatchObject({ temperature: null, top_p: null, max_output_tokens: null, metadata: {}, tool_choice: 'auto', parallel_tool_calls: true, tools: [] });
  });

  it('function tools, a named tool_choice and parallel_tool_calls map to chat; strict only when the client set it', () => {
    const params = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const d = ok({
      input: 'x',
      tools: [
        { type: 'function', name: 'weather', description: 'Weather now', parameters: params, strict: true },
        { type: 'function', name: 'time', parameters: null },
      ],
      tool_choice: { type: 'function', name: 'weather' },
      parallel_tool_calls: false,
    });
    expect(d.chat).toMatchObject({
      tools: [
        { type: 'function', function: { name: 'weather', description: 'Weather now', parameters: params, strict: true } },
        { type: 'function', function: { name: 'time' } },
      ],
      tool_choice: { type: 'function', function: { name: 'weather' } },
      parallel_tool_calls: false,
    });
    expect(d.echo).toMatchObject({
      tools: [
        { type: 'function', name: 'weather', description: 'Weather now', parameters: params, strict: true },
        { type: 'function', name: 'time', description: null, parameters: null, strict: null },
      ],
      tool_choice: { type: 'function', name: 'weather' },
      parallel_tool_calls: false,
    });
  });

  it.each(['auto', 'none', 'required'])('tool_choice %s passes as it is', (choice) => {
    expect(ok({ input: 'x', tools: [{ type: 'function', name: 'f' }], tool_choice: choice }).chat.tool_choice).toBe(choice);
  });

  it("a namespace's functions go to chat as <namespace>__<name>; the answer repeats the namespace; an earlier call with a namespace goes by the flat name", () => {
    const decoded = ok({
      input: [
        { role: 'user', content: 'go' },
        { type: 'function_call', call_id: 'c1', name: 'spawn', namespace: 'agents', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'ok' },
      ],
      tools: [{ type: 'function', name: 'run' }, { type: 'namespace', name: 'agents', description: 'Sub-agents.', tools: [{ type: 'function', name: 'spawn', parameters: { type: 'object' } }] }],
    });
    expect(decoded.chat.tools).toEqual([
      { type: 'function', function: { name: 'run' } },
      { type: 'function', function: { name: 'agents__spawn', parameters: { type: 'object' } } },
    ]);
    expect(decoded.chat.messages[1]).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'c1', function: { name: 'agents__spawn' } }] });
    expect(decoded.toolNames?.get('agents__spawn')).toEqual({ name: 'spawn', namespace: 'agents' });
    expect(decoded.echo?.tools).toEqual([
      { type: 'function', name: 'run', description: null, parameters: null, strict: null },
      { type: 'namespace', name: 'agents', description: 'Sub-agents.', tools: [{ type: 'function', name: 'spawn', description: null, parameters: { type: 'object' }, strict: null }] },
    ]);
  });

  it('hosted tools stay out of the chat tools, named for the router (droppable), and the answer repeats them as sent', () => {
    const fn = { type: 'function', name: 'f', parameters: { type: 'object' } };
    const d = ok({ input: 'x', tools: [{ type: 'web_search' }, fn, { type: 'image_generation' }, { type: 'web_search_preview_2025_03_11' }], tool_choice: 'auto' });
    expect(d.chat.tools).toEqual([{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }]);
    expect(d.chat.tool_choice).toBe('auto');
    expect(d.nativeOnly).toEqual([
      { param: 'tools[0].type', name: 'web_search', droppable: true },
      { param: 'tools[2].type', name: 'image_generation', droppable: true },
      { param: 'tools[3].type', name: 'web_search_preview_2025_03_11', droppable: true },
    ]);
    expect((d.echo!.tools as Json[]).map((t) => t.type)).toEqual(['web_search', 'function', 'image_generation', 'web_search_preview_2025_03_11']);
  });

  it('with only hosted tools, chat gets no tool_choice; `required` forces one, which then cannot be dropped', () => {
    const auto = ok({ input: 'x', tools: [{ type: 'web_search' }], tool_choice: 'auto' });
    expect(auto.chat).not.toHaveProperty('tool_choice');
    expect(auto.chat).not.toHaveProperty('tools');
    expect(auto.nativeOnly).toEqual([{ param: 'tools[0].type', name: 'web_search', droppable: true }]);
    const required = ok({ input: 'x', tools: [{ type: 'web_search' }], tool_choice: 'required' });
    expect(required.chat).not.toHaveProperty('tool_choice');
    expect(required.nativeOnly).toEqual([{ param: 'tools[0].type', name: 'web_search', droppable: false }]);
    expect(ok({ input: 'x' }).nativeOnly).toBeUndefined();
  });

  it('parallel_tool_calls without tools is not sent (OpenAI refuses it there)', () => {
    expect(ok({ input: 'x', parallel_tool_calls: false }).chat).not.toHaveProperty('parallel_tool_calls');
  });

  it.each([
    [{ type: 'text' }, undefined],
    [{ type: 'json_object' }, { type: 'json_object' }],
    [
      { type: 'json_schema', name: 'city', schema: { type: 'object', properties: { name: { type: 'string' } } }, strict: true },
      { type: 'json_schema', json_schema: { name: 'city', schema: { type: 'object', properties: { name: { type: 'string' } } }, strict: true } },
    ],
  ])('text.format %j → response_format %j', (format, expected) => {
    const d = ok({ input: 'x', text: { format } });
    expect(d.chat.response_format).toEqual(expected);
    expect((d.echo!.text as Json).format).toMatchObject(format);
  });

  it('reasoning.effort and text.verbosity go as optional parameters: a target that cannot honour them gets the request without them', () => {
    const d = ok({ input: 'x', reasoning: { effort: 'high', summary: 'auto' }, text: { verbosity: 'low' } });
    expect(d.chat).toMatchObject({ reasoning_effort: 'high', verbosity: 'low' });
    expect(d.optionalParameters).toEqual(['verbosity', 'reasoning_effort']);
    expect(d.echo).toMatchObject({ reasoning: { effort: 'high', summary: null }, text: { format: { type: 'text' }, verbosity: 'low' } });
  });

  it.each([
    ['a body that is not an object', [], 'invalid_type', undefined],
    ['a model that is not a string', { input: 'x', model: 1 }, 'invalid_type', 'model'],
    ['previous_response_id', { input: 'x', previous_response_id: 'resp_1' }, 'previous_response_not_supported', 'previous_response_id'],
    ['conversation', { input: 'x', conversation: 'conv_1' }, 'conversation_not_supported', 'conversation'],
    ['background', { input: 'x', background: true }, 'background_not_supported', 'background'],
    ['a stored prompt', { input: 'x', prompt: { id: 'pmpt_1' } }, 'unsupported_request', 'prompt'],
    ['stream of the wrong type', { input: 'x', stream: 'yes' }, 'invalid_type', 'stream'],
    ['store of the wrong type', { input: 'x', store: 'no' }, 'invalid_type', 'store'],
    ['instructions of the wrong type', { input: 'x', instructions: ['a'] }, 'invalid_type', 'instructions'],
    ['max_output_tokens: 0', { input: 'x', max_output_tokens: 0 }, 'invalid_request', 'max_output_tokens'],
    ['max_output_tokens negative', { input: 'x', max_output_tokens: -5 }, 'invalid_request', 'max_output_tokens'],
    ['max_output_tokens fractional', { input: 'x', max_output_tokens: 2.5 }, 'invalid_request', 'max_output_tokens'],
    ['temperature of the wrong type', { input: 'x', temperature: 'hot' }, 'invalid_type', 'temperature'],
    ['metadata with a number', { input: 'x', metadata: { n: 1 } }, 'invalid_type', 'metadata.n'],
    ['a computer_use_preview tool (the client runs it; no chat form)', { input: 'x', tools: [{ type: 'computer_use_preview' }] }, 'unsupported_tool', 'tools[0].type'],
    ['a custom tool', { input: 'x', tools: [{ type: 'function', name: 'f' }, { type: 'custom', name: 'apply_patch' }] }, 'unsupported_tool', 'tools[1].type'],
    ['a local_shell tool', { input: 'x', tools: [{ type: 'local_shell' }] }, 'unsupported_tool', 'tools[0].type'],
    ['a function tool without a name', { input: 'x', tools: [{ type: 'function' }] }, 'invalid_type', 'tools[0].name'],
    ['tools of the wrong type', { input: 'x', tools: {} }, 'invalid_type', 'tools'],
    ['tool_choice of a built-in tool', { input: 'x', tool_choice: { type: 'file_search' } }, 'unsupported_tool', 'tool_choice.type'],
    ['tool_choice allowed_tools', { input: 'x', tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] } }, 'unsupported_request', 'tool_choice.type'],
    ['an unknown tool_choice', { input: 'x', tool_choice: 'sometimes' }, 'invalid_request', 'tool_choice'],
    ['an unknown text.format', { input: 'x', text: { format: { type: 'yaml' } } }, 'invalid_request', 'text.format.type'],
    ['a json_schema without a name', { input: 'x', text: { format: { type: 'json_schema', schema: {} } } }, 'invalid_type', 'text.format.name'],
    ['a json_schema without a schema', { input: 'x', text: { format: { type: 'json_schema', name: 'n' } } }, 'invalid_request', 'text.format.schema'],
    ['an unknown effort', { input: 'x', reasoning: { effort: 'extreme' } }, 'invalid_request', 'reasoning.effort'],
    ['an unknown verbosity', { input: 'x', text: { verbosity: 'loud' } }, 'invalid_request', 'text.verbosity'],
    ['top_logprobs', { input: 'x', top_logprobs: 3 }, 'unsupported_request', 'top_logprobs'],
    ['logprobs in include', { input: 'x', include: ['message.output_text.logprobs'] }, 'unsupported_request', 'include'],
    ['a namespace without tools', { input: 'x', tools: [{ type: 'namespace', name: 'ns', tools: [] }] }, 'invalid_type', 'tools[0].tools'],
    ['a custom tool in a namespace', { input: 'x', tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'custom', name: 'c' }] }] }, 'unsupported_tool', 'tools[0].tools[0].type'],
    ['a namespace function whose flat name is too long', { input: 'x', tools: [{ type: 'namespace', name: 'n'.repeat(40), tools: [{ type: 'function', name: 'f'.repeat(30) }] }] }, 'invalid_request', 'tools[0].tools[0].name'],
    ['a function named like a namespace function', { input: 'x', tools: [{ type: 'function', name: 'ns__f' }, { type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'f' }] }] }, 'invalid_request', 'tools'],
  ])('%s → 400 %s naming %s', (_case, body, code, param) => {
    expect(refused(body)).toMatchObject({ code, param });
  });

  it('the stateless refusals say to send the whole input', () => {
    for (const body of [{ previous_response_id: 'resp_1' }, { conversation: 'c' }, { background: true }, { input: [{ type: 'item_reference', id: 'x' }] }]) {
      expect(refused({ input: 'x', ...body }).message).toContain('send the whole conversation as input');
    }
  });

  it('store, stream false, background false and null fields are accepted', () => {
    const d = ok({ input: 'x', store: true, background: false, previous_response_id: null, conversation: null, stream: false, tools: null, text: null });
    expect(d.stream).toBe(false);
  });
});

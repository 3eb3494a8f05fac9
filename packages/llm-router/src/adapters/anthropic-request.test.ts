import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_TOKENS, toAnthropicRequest } from './anthropic-request.js';

const user = (content: unknown) => ({ role: 'user', content });

describe('toAnthropicRequest', () => {
  it('a plain request: model, the default max_tokens, the user turn; no system, stream or tools', () => {
    expect(toAnthropicRequest({ messages: [user('hi')] }, 'claude-x', false)).toEqual({
      model: 'claude-x',
      max_tokens: DEFAULT_MAX_TOKENS,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    });
    expect(toAnthropicRequest({ messages: [user('hi')] }, 'claude-x', true)).toMatchObject({ stream: true });
  });

  it('an assistant turn that only calls tools has no empty text block; turns of one role in a row are one turn', () => {
    const body = toAnthropicRequest(
      {
        messages: [
          user('a'),
          user([{ type: 'text', text: 'b' }]),
          { role: 'assistant', content: '', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '' } }] },
          { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
        ],
      },
      'm',
      false,
    );
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }, { type: 'text', text: 'No.' }] },
    ]);
  });

  it('stop lists, metadata.user_id, and a tool cache_control pass on; tool_choice is sent only with tools', () => {
    const body = toAnthropicRequest(
      {
        messages: [user('hi')],
        stop: ['A', 'B'],
        metadata: { user_id: 'u-1' },
        tool_choice: 'required',
        tools: [{ type: 'function', function: { name: 'f' }, cache_control: { type: 'ephemeral' } }],
      },
      'm',
      false,
    );
    expect(body).toMatchObject({
      stop_sequences: ['A', 'B'],
      metadata: { user_id: 'u-1' },
      tools: [{ name: 'f', input_schema: { type: 'object', properties: {} }, cache_control: { type: 'ephemeral' } }],
      tool_choice: { type: 'any' },
    });
    expect(toAnthropicRequest({ messages: [user('hi')], tool_choice: 'required' }, 'm', false)).not.toHaveProperty('tool_choice');
  });

  it.each([
    ['the function role', { messages: [{ role: 'function', name: 'f', content: 'x' }] }, /no function role/],
    ['a tool message without tool_call_id', { messages: [{ role: 'tool', content: 'x' }] }, /tool_call_id/],
    ['tool call arguments that are not JSON', { messages: [{ role: 'assistant', tool_calls: [{ id: 't', function: { name: 'f', arguments: '{oops' } }] }] }, /not JSON/],
    ['tool call arguments that are not an object', { messages: [{ role: 'assistant', tool_calls: [{ id: 't', function: { name: 'f', arguments: '[1]' } }] }] }, /not a JSON object/],
    ['an svg image', { messages: [user([{ type: 'image_url', image_url: { url: 'data:image/svg+xml;base64,PHN2Zz4=' } }])] }, /jpeg, png, gif and webp/],
    ['an ftp image URL', { messages: [user([{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }])] }, /data: or http/],
    ['an audio part', { messages: [user([{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }])] }, /input_audio part/],
    ['a tool that is not a function', { messages: [user('hi')], tools: [{ type: 'custom', custom: { name: 'x' } }] }, /function tools only/],
  ])('refuses %s before any call (UnsupportedRequestError)', (_what, body, message) => {
    expect(() => toAnthropicRequest(body, 'm', false)).toThrow(expect.objectContaining({ code: 'unsupported_request', message: expect.stringMatching(message) }));
  });
});

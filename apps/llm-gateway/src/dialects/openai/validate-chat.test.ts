import { describe, expect, it } from 'vitest';
import { MAX_MODEL_ID_LENGTH } from '@mana/llm-router';
import { validateChatRequest } from './validate-chat.js';

const user = { role: 'user', content: 'hi' };

function codeOf(body: unknown): string | undefined {
  const v = validateChatRequest(body);
  return v.ok ? undefined : v.error.code;
}

describe('validateChatRequest', () => {
  it('accepts a minimal request and reads model and stream', () => {
    const v = validateChatRequest({ model: 'mana/fast-text', messages: [user], stream: true });
    expect(v).toMatchObject({ ok: true, model: 'mana/fast-text', stream: true });
    expect(validateChatRequest({ messages: [user] })).toMatchObject({ ok: true, model: undefined, stream: false });
  });

  it('accepts the shapes OpenAI allows', () => {
    const body = {
      model: 'mana/vision',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: 'data:...' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'result' },
      ],
      temperature: 0.2,
      max_tokens: 100,
      stream: false,
      stream_options: null,
      tools: [],
      stop: ['\n'],
      response_format: { type: 'json_object' },
    };
    expect(validateChatRequest(body).ok).toBe(true);
  });

  it('names a stable code and the param for each problem', () => {
    expect(codeOf(null)).toBe('invalid_type');
    expect(codeOf([user])).toBe('invalid_type');
    expect(codeOf('hi')).toBe('invalid_type');
    expect(codeOf({})).toBe('missing_messages');
    expect(codeOf({ messages: [] })).toBe('missing_messages');
    expect(codeOf({ messages: 'hi' })).toBe('invalid_type');
    expect(codeOf({ messages: [user], model: 42 })).toBe('invalid_type');
    expect(codeOf({ messages: [user], model: '' })).toBe('invalid_request');
    expect(codeOf({ messages: [user], stream: 'yes' })).toBe('invalid_type');
    expect(codeOf({ messages: [user], temperature: 'hot' })).toBe('invalid_type');
    expect(codeOf({ messages: [user], tools: {} })).toBe('invalid_type');
    expect(codeOf({ messages: [user], stop: 3 })).toBe('invalid_type');
    expect(codeOf({ messages: [user], stream_options: 'x' })).toBe('invalid_type');
    expect(codeOf({ messages: ['hi'] })).toBe('invalid_type');
    expect(codeOf({ messages: [{ content: 'hi' }] })).toBe('invalid_request');
    expect(codeOf({ messages: [{ role: 7, content: 'hi' }] })).toBe('invalid_type');
    expect(codeOf({ messages: [{ role: 'wizard', content: 'hi' }] })).toBe('invalid_request');
    expect(codeOf({ messages: [{ role: 'user', content: 5 }] })).toBe('invalid_type');
    expect(codeOf({ messages: [{ role: 'user', content: [5] }] })).toBe('invalid_type');
    const v = validateChatRequest({ messages: [user, { role: 'user' , content: {} }] });
    expect(v.ok ? undefined : v.error.param).toBe('messages[1].content');
  });

  it('refuses model ids that are too long or not printable ASCII (they are echoed in a header)', () => {
    expect(codeOf({ model: 'x/' + 'a'.repeat(MAX_MODEL_ID_LENGTH - 2), messages: [user] })).toBeUndefined();
    expect(codeOf({ model: 'x/' + 'a'.repeat(MAX_MODEL_ID_LENGTH - 1), messages: [user] })).toBe('invalid_model');
    expect(codeOf({ model: 'up/ok:模型', messages: [user] })).toBe('invalid_model');
    expect(codeOf({ model: 'up/caf\u00e9', messages: [user] })).toBe('invalid_model');
    expect(codeOf({ model: 'up/a\r\nx-injected: 1', messages: [user] })).toBe('invalid_model');
    expect(codeOf({ model: 'up/tab\there', messages: [user] })).toBe('invalid_model');
    expect(codeOf({ model: 'ollama/llama3.1:8b-instruct-q4_K_M', messages: [user] })).toBeUndefined();
    const v = validateChatRequest({ model: 'up/ok:模型', messages: [user] });
    expect(v.ok ? undefined : v.error.param).toBe('model');
  });
});

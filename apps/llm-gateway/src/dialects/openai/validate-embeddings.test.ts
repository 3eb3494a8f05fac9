import { describe, expect, it } from 'vitest';
import { validateEmbeddingRequest } from './validate-embeddings.js';

const ok = (body: unknown) => {
  const v = validateEmbeddingRequest(body);
  if (!v.ok) throw new Error(`expected valid, got ${v.error.code}: ${v.error.message}`);
  return v;
};
const error = (body: unknown) => {
  const v = validateEmbeddingRequest(body);
  if (v.ok) throw new Error('expected invalid');
  return v.error;
};

describe('validateEmbeddingRequest', () => {
  it.each([
    ['a string', 'hello'],
    ['strings', ['a', 'b']],
    ['one token array', [1, 2, 3]],
    ['token arrays', [[1, 2], [0]]],
  ])('accepts %s as input', (_name, input) => {
    expect(ok({ model: 'mana/embed', input }).body.input).toEqual(input);
  });

  it('passes encoding_format, dimensions and user on; null optional fields are dropped; model may be absent', () => {
    expect(ok({ model: 'mana/embed', input: 'a', encoding_format: 'base64', dimensions: 256, user: 'u1' }).body).toEqual({
      model: 'mana/embed',
      input: 'a',
      encoding_format: 'base64',
      dimensions: 256,
      user: 'u1',
    });
    const v = ok({ input: 'a', encoding_format: null, dimensions: null });
    expect(v.model).toBeUndefined();
    expect(v.body).toEqual({ input: 'a' });
    expect(v.stream).toBe(false);
  });

  it.each([
    ['missing input', { model: 'm' }, 'empty_input', 'input'],
    ['empty string', { input: '' }, 'empty_input', 'input'],
    ['empty array', { input: [] }, 'empty_input', 'input'],
    ['empty string item', { input: ['a', 'b', ''] }, 'empty_input', 'input[2]'],
    ['empty token array item', { input: [[1], []] }, 'empty_input', 'input[1]'],
    ['a number after strings', { input: ['a', 1] }, 'invalid_type', 'input[1]'],
    ['null item', { input: ['a', null] }, 'invalid_type', 'input[1]'],
    ['object input', { input: { text: 'a' } }, 'invalid_type', 'input'],
    ['negative token', { input: [1, -2] }, 'invalid_type', 'input[1]'],
    ['fractional token in a nested array', { input: [[1, 2.5]] }, 'invalid_type', 'input[0][1]'],
    ['string inside token arrays', { input: [[1], 'a'] }, 'invalid_type', 'input[1]'],
    ['bad encoding_format', { input: 'a', encoding_format: 'binary' }, 'invalid_request', 'encoding_format'],
    ['zero dimensions', { input: 'a', dimensions: 0 }, 'invalid_type', 'dimensions'],
    ['model not a string', { model: 5, input: 'a' }, 'invalid_type', 'model'],
    ['empty model', { model: '', input: 'a' }, 'invalid_request', 'model'],
    ['stream: true', { input: 'a', stream: true }, 'invalid_request', 'stream'],
  ])('refuses %s', (_name, body, code, param) => {
    expect(error(body)).toMatchObject({ code, param });
  });

  it('refuses a body that is not an object', () => {
    expect(error([1, 2])).toMatchObject({ code: 'invalid_type', param: undefined });
    expect(error('text').message).toContain('got string');
  });
});

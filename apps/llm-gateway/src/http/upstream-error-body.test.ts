import { describe, expect, it } from 'vitest';
import { upstreamErrorBody } from './upstream-error-body.js';

const wrapped = (status: number, body: string) => JSON.parse(upstreamErrorBody(status, 'text/plain', body).body).error;

describe('upstreamErrorBody', () => {
  it('relays an OpenAI-shaped error (an `error` object) byte for byte, with its content type', () => {
    const body = '{"error":{"message":"bad temperature","type":"invalid_request_error","param":"temperature","code":null}}';
    expect(upstreamErrorBody(400, 'application/json; charset=utf-8', body)).toEqual({ contentType: 'application/json; charset=utf-8', body });
  });

  it("wraps Ollama's string error in an OpenAI error object, quoting its text", () => {
    expect(wrapped(400, '{"error":"model \\"x\\" not found, try pulling it first"}')).toEqual({
      message: 'The upstream refused the request with status 400: model "x" not found, try pulling it first',
      type: 'invalid_request_error',
      code: 'upstream_error',
      param: null,
    });
  });

  it('wraps other JSON and non-JSON bodies, tags stripped, text cut short', () => {
    expect(wrapped(422, '{"detail":"missing field"}').message).toBe('The upstream refused the request with status 422 and a body that is not an OpenAI error: {"detail":"missing field"}');
    expect(wrapped(413, '<html><h1>413 Too Large</h1></html>').message).toBe('The upstream refused the request with status 413 and a non-JSON body: 413 Too Large');
    expect(wrapped(400, '').message).toBe('The upstream refused the request with status 400 and a non-JSON body.');
    expect(wrapped(400, 'x'.repeat(2000)).message.length).toBeLessThan(600);
  });
});

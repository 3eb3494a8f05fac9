import { describe, expect, it } from 'vitest';
import { RouteTable, type Route } from './route-table.js';

const noop = (): void => undefined;
const route = (method: Route['method'], path: string): Route => ({ method, path, auth: 'none', handler: noop });

describe('RouteTable', () => {
  const models = route('GET', '/v1/models');
  const model = route('GET', '/v1/models/:id');
  const deleteModel = route('DELETE', '/v1/models/:id');
  const probe = route(['GET', 'HEAD'], '/healthz');
  const table = new RouteTable([models, model, deleteModel, probe, route('POST', '/v1/chat/completions')]);

  it('finds an exact path by method, without params', () => {
    const match = table.match('GET', '/v1/models');
    expect(match).toMatchObject({ kind: 'route', route: models, params: {} });
    expect(table.match('HEAD', '/healthz')).toMatchObject({ kind: 'route', route: probe });
  });

  it('a :param takes the rest of the path, slashes included, decoded', () => {
    expect(table.match('GET', '/v1/models/groq/llama-3.1-8b')).toMatchObject({ route: model, params: { id: 'groq/llama-3.1-8b' } });
    expect(table.match('GET', '/v1/models/ollama%2Fgemma3%3A4b')).toMatchObject({ params: { id: 'ollama/gemma3:4b' } });
    expect(table.match('GET', '/v1/models/%E0%A4%A')).toMatchObject({ params: { id: '%E0%A4%A' } });
    expect(table.match('DELETE', '/v1/models/x')).toMatchObject({ route: deleteModel, params: { id: 'x' } });
  });

  it('a known path with another method is 405 with Allow listing the methods declared for it', () => {
    expect(table.match('POST', '/healthz')).toEqual({ kind: 'method_not_allowed', allow: 'GET, HEAD' });
    expect(table.match('GET', '/v1/chat/completions')).toEqual({ kind: 'method_not_allowed', allow: 'POST' });
    expect(table.match('PUT', '/v1/models/x')).toEqual({ kind: 'method_not_allowed', allow: 'GET, DELETE' });
    expect(table.allowed('/v1/models/a/b')).toBe('GET, DELETE');
  });

  it('anything else is not found', () => {
    expect(table.match('GET', '/v2/models')).toEqual({ kind: 'not_found' });
    expect(table.match('GET', '/v1/model')).toEqual({ kind: 'not_found' });
    // A :param prefix ends with its slash: a longer word is another path, not a param.
    expect(table.match('GET', '/v1/modelsx')).toEqual({ kind: 'not_found' });
    expect(table.match('GET', '/V1/MODELS')).toEqual({ kind: 'not_found' });
    expect(table.match('GET', '/healthz/')).toEqual({ kind: 'not_found' });
    expect(table.match('GET', '')).toEqual({ kind: 'not_found' });
    expect(table.allowed('/nothing')).toBeUndefined();
    expect(table.allowed('/v1/modelsx')).toBeUndefined();
  });

  it('an empty :param still reaches its route, which answers for the empty name itself', () => {
    expect(table.match('GET', '/v1/models/')).toMatchObject({ kind: 'route', route: model, params: { id: '' } });
  });

  it('refuses a route declared twice and a :param that is not last', () => {
    expect(() => new RouteTable([route('GET', '/a'), route(['HEAD', 'GET'], '/a')])).toThrow(/GET \/a is declared twice/);
    expect(() => new RouteTable([route('GET', '/a/:id/b')])).toThrow(/last segment/);
  });
});

/**
 * Bad input: wrong types, huge strings, deep nesting, invalid UTF-8, duplicate
 * keys, wrong content types, endless chunked bodies, oversized headers, broken
 * HTTP framing, then a fuzz loop of random mutations of a valid body. Every
 * one gets a 4xx (or, for what Node's HTTP parser refuses itself, a 400/431
 * written by the gateway's clientError handler and a closed connection) —
 * never a 5xx, never a crash — and the server keeps serving throughout.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import {
  CLIENT_KEY,
  PROVIDER_KEY_VARS,
  SIZES,
  capture,
  chat,
  configYaml,
  finishSuite,
  request,
  startGateway,
  type GatewayProcess,
  type Response,
} from './harness.js';

const MAX_BODY = 1024 * 1024; // --max-body 1mb
const REQUEST_TIMEOUT_MS = 1_500; // --request-timeout: the whole request must arrive within 1.5 s

let gateway: GatewayProcess;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'steady', record: false });
  gateway = await startGateway({
    config: configYaml({
      providers: { steady: { url: fake.baseUrl, key: PROVIDER_KEY_VARS[0] } },
      aliases: {},
      defaultChain: ['steady/m'],
    }),
    args: ['--max-body', '1mb', '--request-timeout', `${REQUEST_TIMEOUT_MS}ms`],
  });
});

afterAll(() => finishSuite(gateway, [fake]));

const auth = { authorization: `Bearer ${CLIENT_KEY}` };
const json = { ...auth, 'content-type': 'application/json' };
const valid = { model: 'mana/fast-text', messages: [{ role: 'user', content: 'Hello' }] };

function post(body: string | Buffer, headers: Record<string, string | number> = json): Promise<Response> {
  return request(gateway.url, { body, headers, timeoutMs: 10_000 });
}

function codeOf(r: Response): string | undefined {
  try {
    return (JSON.parse(r.body) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

async function stillServing(): Promise<void> {
  const r = await chat(gateway.url, 'mana/fast-text');
  expect(r.status, 'a normal request right after').toBe(200);
  expect(gateway.isAlive()).toBe(true);
}

/** Writes raw bytes on a fresh connection; resolves with what came back and whether the server closed. */
function raw(
  write: (socket: net.Socket) => void,
  timeoutMs = 5_000,
): Promise<{ text: string; status: number | undefined; closedByServer: boolean }> {
  const { hostname, port } = new URL(gateway.url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let text = '';
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      capture(text);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
      resolve({ text, status: status === undefined ? undefined : Number(status), closedByServer });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      text += d;
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    // An error (EPIPE/ECONNRESET while we are still writing) is followed by 'close'.
    socket.on('error', () => undefined);
    socket.on('connect', () => write(socket));
  });
}

const head = (extra: string, length?: number) =>
  `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${CLIENT_KEY}\r\nContent-Type: application/json\r\n${
    length === undefined ? '' : `Content-Length: ${length}\r\n`
  }${extra}\r\n`;

describe('bad input: named cases', () => {
  const typeCases: [string, unknown, string][] = [
    ['messages is a string', { model: 'mana/fast-text', messages: 'hello' }, 'invalid_type'],
    ['messages holds a number', { model: 'mana/fast-text', messages: [1] }, 'invalid_type'],
    ['messages is null', { model: 'mana/fast-text', messages: null }, 'missing_messages'],
    ['messages is empty', { model: 'mana/fast-text', messages: [] }, 'missing_messages'],
    ['model is a number', { ...valid, model: 5 }, 'invalid_type'],
    ['stream is a string', { ...valid, stream: 'yes' }, 'invalid_type'],
    ['temperature is a string', { ...valid, temperature: 'hot' }, 'invalid_type'],
    ['role is missing', { model: 'mana/fast-text', messages: [{ content: 'x' }] }, 'invalid_request'],
    ['role is an object', { model: 'mana/fast-text', messages: [{ role: {}, content: 'x' }] }, 'invalid_type'],
    ['stream_options is an array', { ...valid, stream_options: [] }, 'invalid_type'],
  ];
  for (const [name, body, code] of typeCases) {
    it(`wrong type: ${name} → 400 ${code}`, async () => {
      const r = await post(JSON.stringify(body));
      expect(r.status).toBe(400);
      expect(codeOf(r)).toBe(code);
    });
  }

  it.each([
    ['a JSON array', '[]'],
    ['a JSON string', '"hello"'],
    ['a JSON number', '42'],
    ['JSON null', 'null'],
    ['an empty body', ''],
    ['truncated JSON', '{"model":"mana/fast-text","messages":[{"role":"user"'],
    ['trailing garbage', `${JSON.stringify(valid)}}}`],
    ['NaN literal', '{"model":"mana/fast-text","temperature":NaN,"messages":[]}'],
  ])('not a JSON object: %s → 400', async (_name, body) => {
    const r = await post(body);
    expect(r.status).toBe(400);
    expect(['invalid_json', 'invalid_request', 'invalid_type']).toContain(codeOf(r));
  });

  it('huge strings: a 900 kB model name → 400 invalid_model (ids over 256 characters), a body over --max-body → 413 and the connection closes', async () => {
    const r1 = await post(JSON.stringify({ ...valid, model: 'm'.repeat(900_000) }));
    expect(r1.status).toBe(400);
    expect(codeOf(r1)).toBe('invalid_model');
    expect(r1.body.length, 'the 400 does not echo the name back').toBeLessThan(4_096);
    const r2 = await post(JSON.stringify({ ...valid, messages: [{ role: 'user', content: 'x'.repeat(MAX_BODY) }] }));
    expect(r2.status).toBe(413);
    expect(codeOf(r2)).toBe('request_too_large');
    expect(r2.headers.connection).toBe('close');
    await stillServing();
  });

  it('deep nesting: 200,000 nested arrays, and 100 nested objects inside a message → 400', async () => {
    const deep = `{"model":"mana/fast-text","messages":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    const r1 = await post(deep);
    expect(r1.status).toBe(400);
    let nested: unknown = 'x';
    for (let i = 0; i < 100; i += 1) nested = { a: nested };
    const r2 = await post(JSON.stringify({ ...valid, messages: [{ role: 'user', content: 'x', extra: nested }] }));
    expect(r2.status).toBe(400);
    await stillServing();
  });

  it('invalid UTF-8 anywhere (outside strings, in the model name, in message text) → 400 invalid_utf8, never decoded lossily', async () => {
    const cases = [
      Buffer.concat([Buffer.from('{"model":"mana/fast-text",'), Buffer.from([0xff, 0xfe]), Buffer.from('"messages":[]}')]),
      Buffer.concat([Buffer.from('{"model":"mana/fast-'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('","messages":[{"role":"user","content":"x"}]}')]),
      Buffer.concat([
        Buffer.from('{"model":"mana/fast-text","messages":[{"role":"user","content":"bad '),
        Buffer.from([0xed, 0xa0, 0x80, 0xff]), // a UTF-16 surrogate encoded in UTF-8, then a stray byte
        Buffer.from(' bytes"}]}'),
      ]),
      Buffer.concat([Buffer.from('{"model":"mana/fast-text","messages":[{"role":"user","content":"cut '), Buffer.from([0xe2, 0x82]), Buffer.from('"}]}')]),
    ];
    for (const body of cases) {
      const r = await post(body);
      expect(r.status, body.toString('latin1')).toBe(400);
      expect(codeOf(r)).toBe('invalid_utf8');
    }
    await stillServing();
  });

  it('duplicate keys: the last one wins, so a bad last value → 400', async () => {
    const r1 = await post('{"model":"mana/fast-text","messages":[{"role":"user","content":"x"}],"messages":5}');
    expect(r1.status).toBe(400);
    expect(codeOf(r1)).toBe('invalid_type');
    const r2 = await post('{"model":"mana/fast-text","model":{"a":1},"messages":[{"role":"user","content":"x"}]}');
    expect(r2.status).toBe(400);
  });

  it.each([['text/plain'], ['application/x-www-form-urlencoded'], ['multipart/form-data; boundary=x'], ['application/xml']])(
    'wrong content type %s → 415',
    async (type) => {
      const r = await post(JSON.stringify(valid), { ...auth, 'content-type': type });
      expect(r.status).toBe(415);
      expect(codeOf(r)).toBe('unsupported_media_type');
    },
  );

  it('other request errors: GET → 405, unknown path → 404, bad priority header → 400, no key → 401', async () => {
    expect((await request(gateway.url, { method: 'GET', headers: auth })).status).toBe(405);
    expect((await request(gateway.url, { method: 'POST', path: '/v1/nothing', headers: json, body: '{}' })).status).toBe(404);
    expect((await post(JSON.stringify(valid), { ...json, 'x-mana-llm-priority': 'urgent' })).status).toBe(400);
    expect((await post(JSON.stringify(valid), { 'content-type': 'application/json' })).status).toBe(401);
  });

  it('a chunked body that never ends (streamed past --max-body) → 413 and the connection closes', async () => {
    const result = await raw((socket) => {
      socket.write(head('Transfer-Encoding: chunked\r\n'));
      const piece = `{"pad":"${'x'.repeat(60_000)}",`;
      const chunk = `${piece.length.toString(16)}\r\n${piece}\r\n`;
      let sent = 0;
      const pump = () => {
        // Bounded: at most 4 MB, or until the server answers/closes.
        while (sent < 4 * MAX_BODY && !socket.destroyed) {
          sent += piece.length;
          if (!socket.write(chunk)) return socket.once('drain', pump);
        }
      };
      socket.on('error', () => undefined);
      pump();
    }, 10_000);
    // The gateway answers 413, then keeps reading and discarding the body for a
    // bounded while (1 s / 1 MB) before closing, so the close cannot turn into
    // a reset that overtakes the 413. The endless body is cut off either way.
    expect(result.closedByServer).toBe(true);
    expect(result.status, result.text.slice(0, 200)).toBe(413);
    expect(result.text).toContain('request_too_large');
    expect(result.text.toLowerCase()).toContain('connection: close');
    await stillServing();
  });

  it('a chunked body that stalls: other requests are served meanwhile, then 408 and close after --request-timeout', async () => {
    const started = Date.now();
    const piece = '{"model":"mana/fa';
    const stalled = raw((socket) => socket.write(`${head('Transfer-Encoding: chunked\r\n')}${piece.length.toString(16)}\r\n${piece}\r\n`), 10_000);
    for (let i = 0; i < 5; i += 1) await stillServing();
    const result = await stalled;
    const tookMs = Date.now() - started;
    expect(result.status, result.text.slice(0, 200)).toBe(408);
    expect(result.closedByServer).toBe(true);
    // Node enforces the timeout on a 1 s check interval.
    expect(tookMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expect(tookMs).toBeLessThan(REQUEST_TIMEOUT_MS + 2_500);
  });

  it('a request head that never ends → 408 and close after the head timeout', async () => {
    const started = Date.now();
    const result = await raw((socket) => socket.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: '), 10_000);
    expect(result.status, result.text.slice(0, 200)).toBe(408);
    expect(result.closedByServer).toBe(true);
    expect(Date.now() - started).toBeLessThan(REQUEST_TIMEOUT_MS + 2_500);
  });

  it('headers too large (40 kB) → 431 from the gateway, connection closed', async () => {
    const result = await raw((socket) => socket.write(head(`X-Filler: ${'a'.repeat(40_000)}\r\n`, 2) + '{}'));
    expect(result.status).toBe(431);
    expect(result.closedByServer).toBe(true);
  });

  it.each([
    ['a garbage request line', 'HELLO THERE\r\n\r\n'],
    ['a bad chunk size', `${head('Transfer-Encoding: chunked\r\n')}zz\r\nxx\r\n0\r\n\r\n`],
    ['Content-Length and Transfer-Encoding together', `${head('Transfer-Encoding: chunked\r\n', 5)}0\r\n\r\n`],
    ['a header without a colon', 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n'],
    ['an invalid character in a header name', 'POST /v1/chat/completions HTTP/1.1\r\nHo st: x\r\n\r\n'],
    ['a negative Content-Length', head('', -1)],
  ])("what Node's HTTP parser refuses itself (%s) → 400 and the connection closes", async (_name, bytes) => {
    const result = await raw((socket) => socket.write(bytes));
    expect(result.status).toBe(400);
    expect(result.closedByServer).toBe(true);
    await stillServing();
  });
});

// ---------------------------------------------------------------- fuzz

const SEED = Number(process.env.RELIABILITY_SEED ?? Date.now() % 100_000);

function mutate(random: () => number): Buffer {
  const base = Buffer.from(
    JSON.stringify({
      model: 'mana/fast-text',
      stream: random() < 0.3,
      temperature: 0.5,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello there' },
      ],
    }),
  );
  const pick = (n: number) => Math.floor(random() * n);
  let out = base;
  const rounds = 1 + pick(4);
  for (let r = 0; r < rounds; r += 1) {
    const at = pick(out.length);
    switch (pick(8)) {
      case 0: // delete a byte
        out = Buffer.concat([out.subarray(0, at), out.subarray(at + 1)]);
        break;
      case 1: // insert a random byte (often invalid UTF-8 or a control character)
        out = Buffer.concat([out.subarray(0, at), Buffer.from([pick(256)]), out.subarray(at)]);
        break;
      case 2: // truncate
        out = out.subarray(0, at);
        break;
      case 3: // duplicate a slice
        out = Buffer.concat([out.subarray(0, at), out.subarray(pick(out.length), pick(out.length) + 1 + pick(20)), out.subarray(at)]);
        break;
      case 4: // swap a structural character
        out = Buffer.from(out.toString('latin1').replace(/[{}[\]:,"]/, '{}[]:,"'[pick(7)]!), 'latin1');
        break;
      case 5: // replace a value with another JSON type
        out = Buffer.from(
          out.toString('utf8').replace(/"(model|messages|stream|temperature|role|content)":/, (m) => `${m}${['null', '[]', '{}', '1e309', '-0', '"x"', 'true', '[[[[1]]]]'][pick(8)]},"_":`),
        );
        break;
      case 6: // a huge number or string
        out = Buffer.from(out.toString('utf8').replace('0.5', random() < 0.5 ? '9'.repeat(400) : `"${'z'.repeat(50_000)}"`));
        break;
      default: // wrap the whole body
        out = Buffer.concat([Buffer.from(['[', '{"a":', '"'][pick(3)]!), out]);
    }
  }
  return out;
}

describe('bad input: fuzz', () => {
  it(`${SIZES.fuzzCases} random mutations of a valid body (seed ${SEED}): never a 5xx, never a crash, still serving`, async () => {
    const random = seededRandom(SEED);
    const statuses = new Map<number, number>();
    const problems: string[] = [];
    for (let i = 0; i < SIZES.fuzzCases; i += 1) {
      const body = mutate(random);
      let r: Response;
      try {
        r = await post(body);
      } catch (error) {
        problems.push(`case ${i}: ${(error as Error).message} for ${body.toString('latin1').slice(0, 120)}`);
        continue;
      }
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status >= 500) problems.push(`case ${i}: ${r.status} ${r.body.slice(0, 200)} for ${body.toString('latin1').slice(0, 120)}`);
      if (i % 100 === 99) await stillServing();
    }
    expect(problems.slice(0, 5), JSON.stringify(Object.fromEntries(statuses))).toEqual([]);
    // Most mutations break the request (4xx); the rest still are valid requests (200).
    expect([...statuses.keys()].every((s) => s === 200 || (s >= 400 && s < 500))).toBe(true);
    await stillServing();
  });
});

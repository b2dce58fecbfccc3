/**
 * Property-based fuzzing of task creation for every model: valid requests mutated in type,
 * nullness, unicode, number size, nesting, duplicated keys, invalid UTF-8, truncation, content
 * type and credentials. Whatever is sent, the answer is never a 5xx, always the family's
 * envelope with a documented code, the process stays up and its memory stays bounded.
 *
 * FUZZ_RUNS sets the runs per property (CI default: small); `npm run fuzz` runs long.
 */
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS } from '../../src/catalog/index.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FUZZ_RUNS, KNOWN_FIELDS, expectEnvelope, pathOf, send, validBody, type JsonObject } from './support.js';

let server: TestServer;
let rssAtStart = 0;

beforeAll(async () => {
  // The instant engine settles accepted tasks at once; the request quota is off so every
  // request reaches validation (429 would also be a documented answer).
  server = await startServer({ MEDIAGATE_ENGINE: 'instant', MEDIAGATE_RATE_LIMIT_PER_MIN: '0', MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0' });
  rssAtStart = process.memoryUsage().rss;
});

afterAll(async () => server.close());

// ----------------------------------------------------------------------------------------------
// Generators
// ----------------------------------------------------------------------------------------------

function nest(depth: number, object: boolean): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i += 1) value = object ? { a: value } : [value];
  return value;
}

const SPECIALS = [
  null,
  true,
  false,
  0,
  -0,
  -1,
  1.5,
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  Number.MIN_VALUE,
  2 ** 31,
  2 ** 32,
  '',
  ' ',
  '\u0000',
  '\uFEFF',
  '\u202e',
  'ü',
  '🦊🦊',
  '\ud800',
  '5',
  '16:9',
  '720p',
  'https://',
  'https://127.0.0.1/x.png',
  'http://example.com/x.png',
  'data:',
  'data:image/png;base64,',
  'data:image/png;base64,iVBORw0KGgo=',
  `https://example.com/${'a'.repeat(5000)}`,
  [],
  {},
  [null],
  { __proto__: { polluted: true } },
  { constructor: { prototype: { polluted: true } } },
] as const;

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(...SPECIALS),
  fc.jsonValue({ maxDepth: 4 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 100 }),
  fc.double(),
  fc.integer(),
  fc.array(fc.oneof(fc.string(), fc.integer(), fc.constant(null)), { maxLength: 40 }),
  fc.tuple(fc.integer({ min: 1, max: 100 }), fc.boolean()).map(([depth, object]) => nest(depth, object)),
  fc.dictionary(fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 8 }),
);

const fieldName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...KNOWN_FIELDS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', 'MODEL', 'model ') },
);

type Mutation = { kind: 'set'; field: string; value: unknown } | { kind: 'delete'; field: string } | { kind: 'replace'; value: unknown };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('set' as const), field: fieldName, value: hostileValue }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), field: fieldName }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replace' as const), value: hostileValue }) },
);

/** Mutations of the serialised text: what a JSON value cannot express. */
type TextMutation =
  | { kind: 'none' }
  | { kind: 'truncate'; at: number }
  | { kind: 'invalid-utf8'; at: number; bytes: number[] }
  | { kind: 'duplicate-key'; field: string; value: unknown }
  | { kind: 'huge-number'; digits: number; exponent: number }
  | { kind: 'bom' }
  | { kind: 'trailing'; text: string };

const textMutation: fc.Arbitrary<TextMutation> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('invalid-utf8' as const),
      at: fc.nat(),
      bytes: fc.constantFrom([0xff], [0xc3, 0x28], [0xe2, 0x82], [0xf0, 0x28, 0x8c, 0x28], [0xed, 0xa0, 0x80], [0xc0, 0xaf]).map((bytes) => [...bytes]),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('duplicate-key' as const), field: fieldName, value: hostileValue }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('huge-number' as const),
      digits: fc.integer({ min: 20, max: 5000 }),
      exponent: fc.integer({ min: -99999, max: 99999 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'bom' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('trailing' as const), text: fc.constantFrom(',', '}', ']', ' x', '\u0000', '{}', '//c') }) },
);

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/json;charset=latin1',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'application/json-patch+json',
      '',
      ';',
      'application/json, text/plain',
    ),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const credential = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('key0', 'key1') },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.constant(undefined),
      fc.constantFrom('Bearer', 'Bearer ', 'Basic abc', 'bearer mg_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', `Bearer ${'x'.repeat(5000)}`),
      fc.string({ unit: 'binary-ascii', maxLength: 80 }).map((text) => `Bearer ${text.replace(/[^\x21-\x7e]/g, '')}`),
    ),
  },
);

/** A fresh copy: generated values are shared by fast-check and must never be mutated. */
function copy(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : (JSON.parse(text) as unknown);
}

function applyMutations(base: JsonObject, mutations: readonly Mutation[]): unknown {
  let body: unknown = copy(base);
  for (const m of mutations) {
    if (m.kind === 'replace') body = copy(m.value);
    else if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
      const record = body as Record<string, unknown>;
      if (m.kind === 'set') Object.defineProperty(record, m.field, { value: copy(m.value), enumerable: true, writable: true, configurable: true });
      else delete record[m.field];
    }
  }
  return body;
}

function applyText(text: string, m: TextMutation): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  switch (m.kind) {
    case 'none':
      return bytes;
    case 'truncate':
      return bytes.subarray(0, m.at % (bytes.length + 1));
    case 'invalid-utf8': {
      const at = m.at % (bytes.length + 1);
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(m.bytes), bytes.subarray(at)]);
    }
    case 'duplicate-key':
      return text.startsWith('{') ? Buffer.from(`{${JSON.stringify(m.field)}:${JSON.stringify(m.value) ?? 'null'},${text.slice(1)}`) : bytes;
    case 'huge-number': {
      const number = `${'9'.repeat(m.digits)}e${m.exponent}`;
      return text.startsWith('{') ? Buffer.from(`{"duration":${number},"seed":-${number},${text.slice(1)}`) : Buffer.from(number);
    }
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
    case 'trailing':
      return Buffer.from(text + m.text);
  }
}

// ----------------------------------------------------------------------------------------------
// Properties
// ----------------------------------------------------------------------------------------------

describe.each(MODELS.map((row) => [row.id, row] as const))('fuzz %s', (_id, row) => {
  it('a valid request is accepted', async () => {
    const path = pathOf(row);
    const reply = await send(server.url, {
      method: 'POST',
      path,
      headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify(validBody(row))),
    });
    expect(reply.status, reply.text).toBe(200);
  });

  it('mutated requests always get the family envelope with a documented code, never a 5xx', async () => {
    const path = pathOf(row);
    const base = validBody(row);
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 4 }), textMutation, contentType, credential, async (mutations, text, type, cred) => {
        const body = applyMutations(base, mutations);
        const raw = applyText(JSON.stringify(body) ?? 'null', text);
        const headers: Record<string, string> = {};
        if (type !== undefined) headers['content-type'] = type;
        if (cred === 'key0' || cred === 'key1') headers['authorization'] = `Bearer ${server.keys[cred === 'key0' ? 0 : 1]}`;
        else if (cred !== undefined) headers['authorization'] = cred;
        const reply = await send(server.url, { method: 'POST', path, headers, body: raw });
        expectEnvelope(path, reply, `POST ${path} ${type ?? '(no type)'} ${raw.subarray(0, 300).toString('utf8')}`);
      }),
      { numRuns: FUZZ_RUNS },
    );
  });
});

describe('fuzz reads and routes', () => {
  it('task ids, paths and methods of any shape get the envelope', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/v1/video/generations/', '/v1/images/generations/async/', '/v1/models/', '/v1/', '/files/x/'),
        fc.string({ unit: 'binary', maxLength: 80 }),
        fc.constantFrom('GET', 'GET', 'DELETE', 'PUT', 'PATCH', 'POST'),
        async (prefix, tail, method) => {
          const path = prefix + encodeURIComponent(tail);
          const reply = await send(server.url, { method, path, headers: { authorization: `Bearer ${server.keys[0]}` } });
          expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(500);
          // A read that succeeds (a model, a list) has its own shape; every error has the envelope.
          if (!path.startsWith('/files/') && reply.status !== 200) expectEnvelope(path, reply, `${method} ${path}`);
        },
      ),
      { numRuns: FUZZ_RUNS * 5 },
    );
  });

  it('bodies whose Content-Length lies (truncated transfers) leave the server answering', async () => {
    const url = new URL(server.url);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 5000 }), fc.boolean(), async (missing, destroy) => {
        const body = JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'truncated' });
        const answer = await new Promise<string>((resolve) => {
          const socket = connect(Number(url.port), url.hostname, () => {
            socket.write(
              `POST /v1/video/generations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.keys[0]}\r\nContent-Type: application/json\r\nContent-Length: ${body.length + missing}\r\n\r\n${body}`,
            );
            if (destroy) socket.destroy();
            else socket.end();
          });
          let received = '';
          socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
          socket.on('close', () => resolve(received));
          socket.on('error', () => resolve(received));
          socket.setTimeout(5_000, () => socket.destroy());
        });
        if (answer !== '') expect(answer, answer).not.toMatch(/^HTTP\/1\.1 5/);
      }),
      { numRuns: Math.min(FUZZ_RUNS, 60) },
    );
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
  });
});

describe('after the fuzzing', () => {
  it('the process is up and its memory bounded', async () => {
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    const grown = process.memoryUsage().rss - rssAtStart;
    expect(grown, `RSS grew by ${Math.round(grown / 1e6)} MB`).toBeLessThan(400 * 1024 * 1024);
  });
});

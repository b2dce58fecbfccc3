/**
 * Creates answered before routing (src/http/fast-create.ts): the same status, body, headers,
 * metrics and log line as the Fastify route, and every request it cannot take left to the
 * router untouched. `inject()` never passes through the server, so it always shows the router's
 * answer; `mediagate_http_fast_creates_total` says which path answered a request over a socket.
 */
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logging.js';
import { eventually } from './helpers/eventually.js';
import { TEST_KEYS, startServer, type TestServer } from './helpers/server.js';

interface Seen {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const VIDEO = '/v1/video/generations';
const IMAGE = '/v1/images/generations/async';
const FOX = JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox' });
const LIGHTHOUSE = JSON.stringify({ model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', size: '512x512' });

// Headers that differ by nature between two responses, or that only a socket carries.
const VARYING = new Set(['date', 'connection', 'keep-alive', 'x-request-id', 'transfer-encoding']);

function comparable(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !VARYING.has(name.toLowerCase())));
}

/** A created task's body with what differs between two creates (its id, its times) named, not valued. */
function sameTask(body: string): unknown {
  const json = JSON.parse(body) as Record<string, unknown>;
  const data = json['data'];
  if (typeof data === 'object' && data !== null && 'task_id' in data) return { ...json, data: { ...data, task_id: typeof data.task_id } };
  return { ...json, id: typeof json['id'], created_at: typeof json['created_at'] };
}

async function overSocket(server: TestServer, path: string, body: string, headers: Record<string, string> = {}, key = server.keys[0]): Promise<Seen> {
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
}

async function throughRouter(server: TestServer, path: string, body: string): Promise<Seen> {
  const res = await server.app.http.inject({
    method: 'POST',
    url: path,
    headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
    payload: body,
  });
  const headers = Object.fromEntries(Object.entries(res.headers).map(([name, value]) => [name, String(value)]));
  return { status: res.statusCode, headers, body: res.body };
}

/** A POST whose body goes chunked, without a Content-Length (fetch always sends one for a string). */
function chunked(server: TestServer, path: string, body: string): Promise<number> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path, method: 'POST', headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.write(body.slice(0, 10));
    req.end(body.slice(10));
  });
}

async function metric(server: TestServer, series: RegExp): Promise<number> {
  return Number(series.exec(await (await fetch(`${server.url}/metrics`)).text())?.[1] ?? 0);
}

const fastCreates = (server: TestServer): Promise<number> => metric(server, /^mediagate_http_fast_creates_total (\d+)/m);

/** The first request of a key goes through the router and caches the key for the fast path. */
async function warm(server: TestServer, key = server.keys[0]): Promise<void> {
  const res = await fetch(`${server.url}${VIDEO}`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
}

describe('a create answered before routing', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_ENGINE: 'instant', MEDIAGATE_WORKERS: 'false' });
    await warm(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  const deep = `{"model":"vendora/famw-2.7-t2v","prompt":"a fox","extra":${'['.repeat(40)}${']'.repeat(40)}}`;
  it.each([
    ['a video task', VIDEO, FOX, 200],
    ['an image task', IMAGE, LIGHTHOUSE, 200],
    ['an unknown model', VIDEO, JSON.stringify({ model: 'vendora/nope', prompt: 'a fox' }), 400],
    ['no prompt', VIDEO, JSON.stringify({ model: 'vendora/famw-2.7-t2v' }), 400],
    ['an unknown model, image family', IMAGE, JSON.stringify({ model: 'vendora/nope', prompt: 'a fox' }), 400],
    ['malformed JSON', VIDEO, '{"model":', 400],
    ['malformed JSON, image family', IMAGE, '{"model":', 400],
    ['nesting past the bound', VIDEO, deep, 400],
    ['a JSON null', VIDEO, 'null', 400],
    ['an array', IMAGE, '[]', 400],
  ] as const)("%s: the router's status, body and headers", async (_name, path, body, status) => {
    const before = await fastCreates(server);
    const fast = await overSocket(server, path, body);
    expect(await fastCreates(server)).toBe(before + 1);
    const routed = await throughRouter(server, path, body);
    expect(fast.status).toBe(status);
    expect(routed.status).toBe(status);
    if (status === 200) expect(sameTask(fast.body)).toEqual(sameTask(routed.body));
    else expect(fast.body).toBe(routed.body);
    expect(comparable(fast.headers)).toEqual(comparable(routed.headers));
    expect(fast.headers['x-request-id']).toMatch(/^[A-Za-z0-9_-]{16}$/);
  });

  it('creates a task the API then serves, with its request id', async () => {
    const fast = await overSocket(server, VIDEO, FOX, { 'x-request-id': 'client-id.7' });
    expect(fast.headers['x-request-id']).toBe('client-id.7');
    const id = (JSON.parse(fast.body) as { id: string }).id;
    const polled = await fetch(`${server.url}${VIDEO}/${id}`, { headers: { authorization: `Bearer ${server.keys[0]}` } });
    expect(((await polled.json()) as { id: string; status: string }).status).toBe('queued');
  });

  it('counts its answers in the request metrics under the route, with their status', async () => {
    const ok = /^mediagate_http_requests_total\{route="\/v1\/video\/generations",method="POST",status="200"\} (\d+)/m;
    const bad = /^mediagate_http_requests_total\{route="\/v1\/video\/generations",method="POST",status="400"\} (\d+)/m;
    const created = /^mediagate_tasks_created_total\{kind="video",model="vendora\/famw-2\.7-t2v"\} (\d+)/m;
    const counts = async (): Promise<number[]> => [await metric(server, ok), await metric(server, bad), await metric(server, created)];
    const before = await counts();
    await overSocket(server, VIDEO, FOX);
    await overSocket(server, VIDEO, '{');
    expect(await counts()).toEqual(before.map((count) => count + 1));
  });
});

describe('creates the fast path leaves to the router', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_ENGINE: 'instant', MEDIAGATE_WORKERS: 'false', MEDIAGATE_CORS_ORIGINS: 'https://app.example' });
    await warm(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    ['an Idempotency-Key', VIDEO, FOX, { 'idempotency-key': 'fast-create-1' }, 200],
    ['a content type with other parameters', VIDEO, FOX, { 'content-type': 'application/json; charset=UTF-8' }, 200],
    ['another content type', VIDEO, FOX, { 'content-type': 'text/plain' }, 415],
    ['a query', `${VIDEO}?x=1`, FOX, {}, 200],
    ['a trailing slash', `${VIDEO}/`, FOX, {}, 200],
    ['an empty body', VIDEO, '', {}, 400],
    ['an Origin (CORS)', IMAGE, LIGHTHOUSE, { origin: 'https://app.example' }, 200],
    ['a body past the fast bound', VIDEO, JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox '.repeat(4000) }), {}, 400],
    ['no key', VIDEO, FOX, { authorization: '' }, 401],
  ] as const)('%s', async (_name, path, body, headers: Record<string, string>, status) => {
    const before = await fastCreates(server);
    const res = await overSocket(server, path, body, headers);
    expect(res.status).toBe(status);
    expect(await fastCreates(server)).toBe(before);
    if (headers['origin'] !== undefined) expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
  });

  it("with a list of CORS origins, a create without an Origin varies by it as the router's does", async () => {
    const before = await fastCreates(server);
    const fast = await overSocket(server, VIDEO, FOX);
    expect(await fastCreates(server)).toBe(before + 1);
    const routed = await throughRouter(server, VIDEO, FOX);
    expect(routed.headers['vary']).toBe('Origin');
    expect(comparable(fast.headers)).toEqual(comparable(routed.headers));
  });

  it('a replay of an Idempotency-Key: the router says so', async () => {
    const first = await overSocket(server, VIDEO, FOX, { 'idempotency-key': 'fast-create-2' });
    const again = await overSocket(server, VIDEO, FOX, { 'idempotency-key': 'fast-create-2' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((JSON.parse(again.body) as { id: string }).id).toBe((JSON.parse(first.body) as { id: string }).id);
  });

  it('a chunked body (no Content-Length)', async () => {
    const before = await fastCreates(server);
    expect(await chunked(server, VIDEO, FOX)).toBe(200);
    expect(await fastCreates(server)).toBe(before);
  });

  it('a key not looked up lately: the router, which caches it for the next create', async () => {
    const before = await fastCreates(server);
    expect((await overSocket(server, VIDEO, FOX, {}, server.keys[1])).status).toBe(200);
    expect(await fastCreates(server)).toBe(before);
    expect((await overSocket(server, VIDEO, FOX, {}, server.keys[1])).status).toBe(200);
    expect(await fastCreates(server)).toBe(before + 1);
  });
});

describe('the request quota with creates answered on both paths', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_ENGINE: 'instant', MEDIAGATE_WORKERS: 'false', MEDIAGATE_RATE_LIMIT_PER_MIN: '4' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('takes one token per create, whichever path answers, and the router refuses the first over it', async () => {
    const before = await fastCreates(server);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await overSocket(server, VIDEO, FOX)).status);
    // The first caches the key (router), the next three are answered here, the fifth is the router's 429.
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    expect(await fastCreates(server)).toBe(before + 3);
    const refused = await overSocket(server, VIDEO, FOX);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect((JSON.parse(refused.body) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
  });
});

describe('at debug level', () => {
  let server: TestServer;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
        callback();
      },
    });
    server = await startServer(
      { MEDIAGATE_ENGINE: 'instant', MEDIAGATE_WORKERS: 'false', LOG_LEVEL: 'debug' },
      { logger: createLogger({ level: 'debug', secrets: TEST_KEYS, destination }) },
    );
    await warm(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  /** The request line of `reqId`; the router writes its own after the response is sent. */
  const requestLineOf = (reqId: string): Promise<Record<string, unknown>> =>
    eventually(() => lines.find((entry) => entry['reqId'] === reqId && entry['msg'] === 'request'), { what: `the request line of ${reqId}` });

  it.each([
    ['a create', FOX, 200],
    ['a refused create', '{', 400],
  ] as const)('%s: the line the router logs', async (name, body, status) => {
    const before = await fastCreates(server);
    const fast = await overSocket(server, VIDEO, body, { 'x-request-id': `fast-${status}` });
    expect(await fastCreates(server)).toBe(before + 1);
    // A query sends the same create through the router.
    const routed = await overSocket(server, `${VIDEO}?x=1`, body, { 'x-request-id': `routed-${status}` });
    expect(await fastCreates(server)).toBe(before + 1);
    expect([fast.status, routed.status]).toEqual([status, status]);
    const shape = ({ time: _time, ms, reqId: _reqId, ...rest }: Record<string, unknown>): Record<string, unknown> => ({ ...rest, ms: typeof ms });
    const [fastLine, routedLine] = [await requestLineOf(`fast-${status}`), await requestLineOf(`routed-${status}`)];
    expect(shape(fastLine), name).toEqual(shape(routedLine));
    expect(fastLine).toMatchObject({ reqId: `fast-${status}`, status, method: 'POST', url: VIDEO, level: 20 });
  });
});

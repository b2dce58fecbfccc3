/**
 * Status polls answered before routing (src/http/dispatch.ts): the same bytes, headers and
 * metrics as the Fastify route, and every request it cannot answer left to the router.
 * `inject()` never passes through the server, so it always shows the router's answer.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logging.js';
import { TEST_KEYS, startServer, type TestServer } from './helpers/server.js';

interface Seen {
  status: number;
  headers: Record<string, string>;
  body: string;
}

// Headers that differ by nature between two responses, or that only a socket carries.
const VARYING = new Set(['date', 'connection', 'keep-alive', 'x-request-id', 'transfer-encoding']);

function comparable(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !VARYING.has(name.toLowerCase())));
}

async function overSocket(server: TestServer, path: string, headers: Record<string, string> = {}): Promise<Seen> {
  const res = await fetch(server.url + path, { headers: { authorization: `Bearer ${server.keys[0]}`, ...headers } });
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
}

async function throughRouter(server: TestServer, path: string): Promise<Seen> {
  const res = await server.app.http.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${server.keys[0]}` } });
  const headers = Object.fromEntries(Object.entries(res.headers).map(([name, value]) => [name, String(value)]));
  return { status: res.statusCode, headers, body: res.body };
}

async function fastPolls(server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return Number(/^mediagate_http_fast_polls_total (\d+)/m.exec(text)?.[1] ?? 'NaN');
}

async function create(server: TestServer, path: string, body: object, key = server.keys[0]): Promise<string> {
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { id?: string; data?: { task_id?: string } };
  const id = json.id ?? json.data?.task_id;
  if (res.status !== 200 || id === undefined) throw new Error(`create failed: ${res.status} ${JSON.stringify(json)}`);
  return id;
}

describe('a status poll answered before routing', () => {
  let server: TestServer;
  let queuedVideo: string;
  let doneVideo: string;
  let doneImage: string;

  beforeAll(async () => {
    // Workers off: a task stays queued until the second server below finishes it.
    server = await startServer({ MEDIAGATE_ENGINE: 'instant', MEDIAGATE_WORKERS: 'false' });
    queuedVideo = await create(server, '/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: 'queued fox' });
    doneVideo = await create(server, '/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: 'a fox' });
    doneImage = await create(server, '/v1/images/generations/async', { model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', size: '512x512' });
    // Settle two of them as a worker would, through the service (the one writer of task state).
    for (const id of [doneVideo, doneImage]) {
      const task = await server.app.service.claimById(id, 'test-worker', 60_000, 3);
      if (!task) throw new Error(`could not claim ${id}`);
      await server.app.service.complete(task, [{ type: task.kind, key: `${id}/out.${task.kind === 'video' ? 'mp4' : 'png'}`, contentType: 'video/mp4' }]);
    }
  });
  afterAll(async () => {
    await server?.close();
  });

  it("answers with the router's status, body and headers, for both families and every state", async () => {
    const paths = [`/v1/video/generations/${queuedVideo}`, `/v1/video/generations/${doneVideo}`, `/v1/images/generations/async/${doneImage}`];
    await overSocket(server, paths[0] ?? ''); // the first request of a key goes through the router and caches the key
    const before = await fastPolls(server);
    for (const path of paths) {
      const fast = await overSocket(server, path);
      const routed = await throughRouter(server, path);
      expect(fast.status).toBe(200);
      expect(fast.body).toBe(routed.body);
      expect(comparable(fast.headers)).toEqual(comparable(routed.headers));
      // 96 random bits, as the router's (request-ids.ts).
      expect(fast.headers['x-request-id']).toMatch(/^[A-Za-z0-9_-]{16}$/);
    }
    expect(await fastPolls(server)).toBe(before + paths.length);
  });

  it("echoes a client's plain x-request-id, as the router does", async () => {
    const res = await overSocket(server, `/v1/video/generations/${doneVideo}`, { 'x-request-id': 'client-id.42' });
    expect(res.headers['x-request-id']).toBe('client-id.42');
  });

  it('counts its answers in the request metrics under the route pattern', async () => {
    const series = /^mediagate_http_requests_total\{route="\/v1\/video\/generations\/:task_id",method="GET",status="200"\} (\d+)/m;
    const count = async (): Promise<number> => Number(series.exec(await (await fetch(`${server.url}/metrics`)).text())?.[1] ?? 0);
    const before = await count();
    await overSocket(server, `/v1/video/generations/${doneVideo}`);
    expect(await count()).toBe(before + 1);
  });
});

describe('requests the fast path leaves to the router', () => {
  let server: TestServer;
  let video: string;
  let otherKeysVideo: string;

  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_ENGINE: 'instant' });
    video = await create(server, '/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: 'a fox' });
    otherKeysVideo = await create(server, '/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: 'a fox' }, server.keys[1]);
    await overSocket(server, `/v1/video/generations/${video}`);
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    ['an unknown task', (): string => `/v1/video/generations/vid_unknown`, 404, { code: 'task_not_found', param: 'task_id' }],
    ["another key's task", (): string => `/v1/video/generations/${otherKeysVideo}`, 404, { code: 'task_not_found', param: 'task_id' }],
    ['a video task on the image path', (): string => `/v1/images/generations/async/${video}`, 404, { code: 'task_not_found' }],
  ] as const)("%s: the family's 404 envelope", async (_name, path, status, fields) => {
    const before = await fastPolls(server);
    const res = await overSocket(server, path());
    expect(res.status).toBe(status);
    const body = JSON.parse(res.body) as { error?: Record<string, unknown>; code?: string; data?: unknown };
    if (path().startsWith('/v1/images')) expect(body).toMatchObject({ code: fields.code, data: null });
    else expect(body.error).toMatchObject(fields);
    expect(await fastPolls(server)).toBe(before);
  });

  it('a missing or unknown key: 401 from the router', async () => {
    const before = await fastPolls(server);
    for (const authorization of ['', 'Bearer mg_not_a_key_at_all_0000000000']) {
      const res = await fetch(`${server.url}/v1/video/generations/${video}`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
    }
    expect(await fastPolls(server)).toBe(before);
  });

  it('a path with a trailing slash or a query: answered by the router, the same task', async () => {
    const before = await fastPolls(server);
    for (const path of [`/v1/video/generations/${video}/`, `/v1/video/generations/${video}?x=1`]) {
      const res = await overSocket(server, path);
      expect(res.status).toBe(200);
      expect((JSON.parse(res.body) as { id: string }).id).toBe(video);
    }
    expect(await fastPolls(server)).toBe(before);
  });

  it("a HEAD request: the router's", async () => {
    const res = await fetch(`${server.url}/v1/video/generations/${video}`, { method: 'HEAD', headers: { authorization: `Bearer ${server.keys[0]}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });
});

describe('the request quota with polls answered on both paths', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_ENGINE: 'instant', MEDIAGATE_RATE_LIMIT_PER_MIN: '6' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('takes one token per request, whichever path answers, and the router refuses the first over it', async () => {
    // Six tokens: the creation takes the first; the key is cached from then on, so the polls of
    // the task are answered before routing and the unknown task's 404 by the router.
    const id = await create(server, '/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: 'a fox' });
    const statuses: number[] = [];
    for (const path of [`/v1/video/generations/${id}`, '/v1/video/generations/vid_unknown', ...Array(4).fill(`/v1/video/generations/${id}`)] as string[]) {
      statuses.push((await overSocket(server, path)).status);
    }
    expect(statuses).toEqual([200, 404, 200, 200, 200, 429]);
    const refused = await overSocket(server, `/v1/video/generations/${id}`);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect((JSON.parse(refused.body) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
  });
});

describe('at debug level', () => {
  let server: TestServer;
  const lines: Record<string, unknown>[] = [];
  let written: () => void = () => {};

  /** The request line of `reqId`, when it is written (the router's comes after the response). */
  function requestLineOf(reqId: string | undefined): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no request line for ${reqId}`)), 5000);
      const look = (): void => {
        const line = lines.find((entry) => entry['reqId'] === reqId && entry['msg'] === 'request');
        if (line === undefined) return;
        clearTimeout(timer);
        written = () => {};
        resolve(line);
      };
      written = look;
      look();
    });
  }

  beforeAll(async () => {
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
        written();
        callback();
      },
    });
    server = await startServer(
      { MEDIAGATE_ENGINE: 'instant', LOG_LEVEL: 'debug' },
      { logger: createLogger({ level: 'debug', secrets: TEST_KEYS, destination }) },
    );
  });
  afterAll(async () => {
    await server?.close();
  });

  it('still answers polls, and logs the line the router logs', async () => {
    const id = await create(server, '/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: 'a fox' });
    const path = `/v1/video/generations/${id}`;
    const requestLine = async (headers: Record<string, string>, url = path): Promise<Record<string, unknown>> => {
      const res = await overSocket(server, url, headers);
      expect(res.status).toBe(200);
      return requestLineOf(res.headers['x-request-id']);
    };
    const before = await fastPolls(server);
    const fast = await requestLine({ 'x-request-id': 'fast-1' });
    expect(await fastPolls(server)).toBe(before + 1);
    // A query sends the same poll through the router.
    const routed = await requestLine({ 'x-request-id': 'routed-1' }, `${path}?x=1`);
    expect(await fastPolls(server)).toBe(before + 1);
    const shape = ({ time: _time, ms, reqId: _reqId, ...rest }: Record<string, unknown>): Record<string, unknown> => ({ ...rest, ms: typeof ms });
    expect(shape(fast)).toEqual(shape(routed));
    expect(fast).toMatchObject({ reqId: 'fast-1', status: 200, method: 'GET', url: path, level: 20 });
  });
});

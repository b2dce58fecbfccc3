/**
 * Limits per key (429 with Retry-After and RateLimit headers, in each family's envelope),
 * bounds on hostile JSON bodies, request ids, security headers, no stack traces, and the fetch
 * policy seen through the API (a task with a loopback input fails with `input_refused`).
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/eventually.js';

interface Reply {
  status: number;
  headers: Headers;
  json: Record<string, unknown>;
  text: string;
}

async function call(
  server: TestServer,
  method: string,
  path: string,
  body?: unknown,
  key = server.keys[0],
  headers: Record<string, string> = {},
): Promise<Reply> {
  const res = await fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** Sends raw bytes with a correct Content-Length; fetch() would re-encode invalid UTF-8. */
async function rawPost(server: TestServer, path: string, body: Buffer, key: string): Promise<Reply> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({
            status: res.statusCode ?? 0,
            headers: new Headers(res.headers as Record<string, string>),
            json: JSON.parse(text) as Record<string, unknown>,
            text,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const VIDEO = { model: 'vendora/famw-2.7-t2v', prompt: 'limits', duration: 2 };
const IMAGE = { model: 'vendora/famz-image-spicy-pro', prompt: 'limits' };

function videoError(reply: Reply): Record<string, unknown> {
  return reply.json['error'] as Record<string, unknown>;
}

describe('requests per minute per key', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_RATE_LIMIT_PER_MIN: '5', MEDIAGATE_WORKERS: 'false' });
  });
  afterAll(async () => server.close());

  it('answers 429 past the quota, with Retry-After and RateLimit headers, in each envelope', async () => {
    for (let i = 0; i < 5; i += 1) expect((await call(server, 'GET', '/v1/models')).status).toBe(200);
    const video = await call(server, 'GET', '/v1/video/generations/vid_nope');
    expect(video.status).toBe(429);
    expect(video.json).toEqual({ error: { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: expect.any(String), param: '' } });
    expect(Number(video.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(video.headers.get('ratelimit-policy')).toBe('"requests";q=5;w=60');
    expect(video.headers.get('ratelimit')).toMatch(/^"requests";r=0;t=\d+$/);

    const image = await call(server, 'POST', '/v1/images/generations/async', IMAGE);
    expect(image.status).toBe(429);
    expect(image.json).toEqual({ code: 'rate_limit_exceeded', message: expect.any(String), data: null });
    expect(image.headers.get('retry-after')).not.toBeNull();
  });

  it('is per key, and an unknown key is still a 401', async () => {
    expect((await call(server, 'GET', '/v1/models', undefined, server.keys[1])).status).toBe(200);
    expect((await call(server, 'GET', '/v1/models', undefined, 'not-a-known-key-123')).status).toBe(401);
  });
});

describe('tasks in flight per key', () => {
  let server: TestServer;
  beforeAll(async () => {
    // No workers: tasks stay queued, so the count only grows.
    server = await startServer({ MEDIAGATE_MAX_TASKS_IN_FLIGHT: '3', MEDIAGATE_WORKERS: 'false' });
  });
  afterAll(async () => server.close());

  it('refuses a creation past the limit with 429, and keeps answering reads and other keys', async () => {
    for (let i = 0; i < 3; i += 1) expect((await call(server, 'POST', '/v1/video/generations', VIDEO)).status).toBe(200);
    const over = await call(server, 'POST', '/v1/video/generations', VIDEO);
    expect(over.status).toBe(429);
    expect(videoError(over)).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded', param: '' });
    expect(over.headers.get('ratelimit-policy')).toBe('"tasks";q=3');
    expect(over.headers.get('retry-after')).not.toBeNull();
    const image = await call(server, 'POST', '/v1/images/generations/async', IMAGE);
    expect(image.status).toBe(429);
    expect(image.json).toMatchObject({ code: 'rate_limit_exceeded', data: null });
    // An invalid request is told what is wrong with it first.
    expect((await call(server, 'POST', '/v1/video/generations', { model: 'vendora/famw-2.7-t2v' })).status).toBe(400);
    expect((await call(server, 'POST', '/v1/video/generations', VIDEO, server.keys[1])).status).toBe(200);
    expect((await call(server, 'GET', '/v1/models')).status).toBe(200);
  });
});

describe('hostile bodies cost little', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_WORKERS: 'false' });
  });
  afterAll(async () => server.close());

  it.each([
    ['nesting deeper than 32 levels', () => `{"model":"vendora/famw-2.7-t2v","prompt":"x","extra":${'['.repeat(40)}${']'.repeat(40)}}`, 'extra'],
    ['a million-item array', () => `{"model":"vendord/v6/reference-to-video","prompt":"x","images":[${'0,'.repeat(1_000_000)}0]}`, 'images'],
    ['an object with too many members', () => `{${Array.from({ length: 1500 }, (_, i) => `"k${i}":0`).join(',')}}`, 'body'],
    ['a 2 MiB prompt', () => JSON.stringify({ ...VIDEO, prompt: 'p'.repeat(2 * 1024 * 1024) }), 'prompt'],
    ['a 2 MiB field name', () => `{"${'k'.repeat(2 * 1024 * 1024)}":1}`, 'body'],
    ['deep nesting at the top', () => '['.repeat(100_000) + ']'.repeat(100_000), 'body'],
  ])('%s -> 400 invalid_parameter', async (_what, make, param) => {
    const started = Date.now();
    const reply = await call(server, 'POST', '/v1/video/generations', make());
    expect(reply.status, reply.text.slice(0, 300)).toBe(400);
    expect(videoError(reply)).toMatchObject({ code: 'invalid_parameter', param });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a data URL is bounded by the body cap, not the string limit', async () => {
    const payload = Buffer.alloc(3 * 1024 * 1024).toString('base64');
    const reply = await call(server, 'POST', '/v1/video/generations', {
      model: 'vendora/famw-2.7-i2v',
      prompt: 'x',
      image: `data:image/png;base64,${payload}`,
    });
    // Accepted (its bytes are checked when the task runs): the string limit does not apply.
    expect(reply.status, reply.text.slice(0, 300)).toBe(200);
  });

  it('the 20 MiB rule of vendord/v6/reference-to-video stays exact', async () => {
    const limit = 20 * 1024 * 1024;
    const bodyOf = (size: number): string => {
      const head = '{"model":"vendord/v6/reference-to-video","prompt":"x","images":["data:image/png;base64,';
      const tail = '"]}';
      return head + 'A'.repeat(size - head.length - tail.length) + tail;
    };
    const at = await call(server, 'POST', '/v1/video/generations', bodyOf(limit));
    expect(at.status === 200 || videoError(at)['param'] !== 'body', `exactly 20 MiB is within the rule: ${at.text.slice(0, 200)}`).toBe(true);
    const over = await call(server, 'POST', '/v1/video/generations', bodyOf(limit + 1));
    expect(over.status).toBe(400);
    expect(videoError(over)).toMatchObject({ code: 'unsupported_value', param: 'body' });
  });

  it('invalid UTF-8 is malformed JSON', async () => {
    const body = Buffer.concat([Buffer.from('{"model":"vendora/famw-2.7-t2v","prompt":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
    const reply = await rawPost(server, '/v1/video/generations', body, server.keys[0]);
    expect(reply.status).toBe(400);
    expect(videoError(reply)).toMatchObject({ code: 'invalid_parameter', param: 'body' });
    const image = await rawPost(server, '/v1/images/generations/async', body, server.keys[0]);
    expect(image.json).toMatchObject({ code: 'invalid_parameter', data: null });
  });
});

describe('request ids, headers, and no stack traces', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_WORKERS: 'false' });
  });
  afterAll(async () => server.close());

  it('echoes a plain client request id and replaces anything else', async () => {
    const plain = await call(server, 'GET', '/v1/models', undefined, server.keys[0], { 'x-request-id': 'client-id.42:abc' });
    expect(plain.headers.get('x-request-id')).toBe('client-id.42:abc');
    for (const hostile of ['has space', 'x'.repeat(200), '{"json":1}']) {
      const reply = await call(server, 'GET', '/v1/models', undefined, server.keys[0], { 'x-request-id': hostile });
      expect(reply.headers.get('x-request-id')).not.toBe(hostile);
      expect(reply.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    }
    const generated = await call(server, 'GET', '/v1/models');
    expect(generated.headers.get('x-request-id')).toMatch(/\S/);
  });

  it('sends security headers on the docs page, files and API responses', async () => {
    const docs = await fetch(`${server.url}/docs`);
    expect(docs.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(docs.headers.get('x-content-type-options')).toBe('nosniff');
    expect(docs.headers.get('x-frame-options')).toBe('DENY');
    expect(docs.headers.get('referrer-policy')).toBe('no-referrer');
    const api = await call(server, 'GET', '/v1/models');
    expect(api.headers.get('x-content-type-options')).toBe('nosniff');
    const missing = await fetch(`${server.url}/files/vid_x/y.mp4?exp=1&sig=x`);
    expect(missing.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('a fault is a 500 in the envelope with no stack trace or internals', async () => {
    const fault = new Error('database exploded at /srv/app/secret/path.ts:12');
    server.app.service.get = () => Promise.reject(fault);
    for (const path of ['/v1/video/generations/vid_x', '/v1/images/generations/async/img_x']) {
      const reply = await call(server, 'GET', path);
      expect(reply.status).toBe(500);
      expect(reply.text).not.toContain('exploded');
      expect(reply.text).not.toContain('/srv/app/');
      expect(reply.text).not.toMatch(/\n\s+at /);
      if (path.startsWith('/v1/images')) expect(reply.json).toMatchObject({ code: 'internal_error', data: null });
      else expect(videoError(reply)).toMatchObject({ type: 'server_error', code: 'internal_error', param: '' });
    }
  });
});

describe('media fetch policy through the API', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => server.close());

  it.each(['https://localhost/x.png', 'https://169.254.169.254/latest/meta-data/x.png', 'https://[::1]/x.png', 'https://2130706433/x.png'])(
    'a task whose image is %s fails with input_refused, param image',
    async (image) => {
      const created = await call(server, 'POST', '/v1/video/generations', {
        model: 'vendord/v6/image-to-video',
        prompt: 'x',
        image,
        duration: 1,
        resolution: '360p',
      });
      expect(created.status, created.text).toBe(200);
      const id = String(created.json['id']);
      let task: Record<string, unknown> = {};
      await eventually(
        async () => {
          task = (await call(server, 'GET', `/v1/video/generations/${id}`)).json;
          return task['status'] === 'failed' || task['status'] === 'completed';
        },
        { deadline: 20_000, interval: 50, what: `task ${id} to end` },
      ).catch(() => undefined);
      expect(task['status']).toBe('failed');
      expect(task['error']).toMatchObject({ type: 'generation_error', code: 'input_refused', param: 'image' });
      expect(String((task['error'] as Record<string, unknown>)['message'])).not.toMatch(/127\.0\.0\.1|::1/);
    },
  );
});

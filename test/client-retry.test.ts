/**
 * The SDK's HTTP behaviour with a scripted `fetch` (the `fetch` option): which failures are
 * retried (reads: 429, 5xx, connection errors; creates: only 429 and connections never made),
 * `Retry-After` honoured, per-attempt timeouts, cancellation, the error class per status and
 * family envelope, and the polling backoff of `wait`. Real-server behaviour is in
 * test/client-sdk.test.ts.
 */
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { rejection, rejectsWith } from './helpers/rejections.js';
import {
  AbortError,
  APIError,
  AuthenticationError,
  ConnectionError,
  Mediagate,
  MediagateError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TaskFailedError,
  TimeoutError,
  ValidationError,
  type Fetch,
  type ProgressEvent,
  type VideoTask,
} from '../src/client/index.js';

interface Call {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly body: string | undefined;
  readonly at: number;
}

type Step = (call: Call, signal: AbortSignal | undefined) => Response | Promise<Response>;

/** A fetch that plays `steps` in order (the last one repeats) and records every call. */
function scripted(...steps: Step[]): { fetch: Fetch; calls: Call[] } {
  const calls: Call[] = [];
  const fetch: Fetch = async (url, init) => {
    const call: Call = {
      url,
      method: init.method ?? 'GET',
      headers: new Headers(init.headers),
      body: typeof init.body === 'string' ? init.body : undefined,
      at: Date.now(),
    };
    calls.push(call);
    const step = steps[Math.min(calls.length - 1, steps.length - 1)];
    if (!step) throw new Error('no step');
    return step(call, init.signal ?? undefined);
  };
  return { fetch, calls };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Step =>
  () =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

const networkError =
  (code: string): Step =>
  () => {
    throw new TypeError('fetch failed', { cause: Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code }) });
  };

/** Never answers; rejects when the request's signal aborts, as fetch does. */
const hang: Step = (_call, signal) =>
  new Promise<Response>((_resolve, reject) => {
    signal?.addEventListener('abort', () => reject(new DOMException('This operation was aborted', 'AbortError')), { once: true });
  });

const videoTask = (overrides: Partial<VideoTask> = {}): VideoTask => ({
  id: 'vid_1',
  object: 'video.generation',
  model: 'vendora/famw-2.7-t2v',
  status: 'queued',
  outputs: [],
  created_at: 1,
  started_at: null,
  completed_at: null,
  progress: null,
  error: null,
  usage: null,
  ...overrides,
});

const VIDEO_400 = { error: { type: 'invalid_request_error', code: 'unsupported_value', message: 'duration must be <= 15', param: 'duration' } };
const FAST = { 'retry-after-ms': '5' };

function client(fetch: Fetch, options: { maxRetries?: number; timeout?: number } = {}): Mediagate {
  return new Mediagate({ baseURL: 'http://mediagate.test', apiKey: 'mg_k', fetch, ...options });
}

const PARAMS = { model: 'vendora/famw-2.7-t2v', prompt: 'a fox' } as const;

describe('reads are retried', () => {
  it('on 5xx, then succeed, with the same request id and key on every attempt', async () => {
    const { fetch, calls } = scripted(json(503, { error: { code: 'internal_error' } }, FAST), json(502, 'bad gateway', FAST), json(200, videoTask()));
    const task = await client(fetch).videos.get('vid_1');
    expect(task.id).toBe('vid_1');
    expect(calls.map((call) => call.url)).toEqual(Array(3).fill('http://mediagate.test/v1/video/generations/vid_1'));
    expect(new Set(calls.map((call) => call.headers.get('x-request-id'))).size).toBe(1);
    expect(calls.every((call) => call.headers.get('authorization') === 'Bearer mg_k')).toBe(true);
  });

  it('up to maxRetries, then throw a ServerError carrying status, body and code', async () => {
    const body = { error: { type: 'server_error', code: 'internal_error', message: 'boom', param: '' } };
    const { fetch, calls } = scripted(json(500, body, FAST));
    const error = await rejection(client(fetch, { maxRetries: 3 }).videos.get('vid_1'));
    expect(calls).toHaveLength(4);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status: 500, code: 'internal_error', param: '', body, message: 'boom' });
  });

  it('on connection errors', async () => {
    const { fetch, calls } = scripted(networkError('ECONNRESET'), json(200, videoTask()));
    await client(fetch).videos.get('vid_1');
    expect(calls).toHaveLength(2);
  });

  it('on 429, waiting as long as Retry-After says (seconds)', async () => {
    const { fetch, calls } = scripted(
      json(429, { code: 'rate_limit_exceeded', message: 'slow down', data: null }, { 'retry-after': '1' }),
      json(200, videoTask()),
    );
    await client(fetch).videos.get('vid_1');
    expect(calls).toHaveLength(2);
    const [first, second] = calls;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('and a 429 that outlasts the retries is a RateLimitError with retryAfter in seconds', async () => {
    const { fetch, calls } = scripted(json(429, { code: 'rate_limit_exceeded', message: 'slow down', data: null }, { 'retry-after-ms': '250' }));
    const started = Date.now();
    const error = await rejection(client(fetch, { maxRetries: 1 }).images.get('img_1'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    expect(calls).toHaveLength(2);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded', retryAfter: 0.25 });
  });

  it('not on 4xx other than 408 and 429', async () => {
    const { fetch, calls } = scripted(json(404, { error: { type: 'invalid_request_error', code: 'task_not_found', message: 'no', param: 'task_id' } }));
    const error = await rejection(client(fetch).videos.get('vid_x'));
    expect(calls).toHaveLength(1);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'task_not_found', param: 'task_id' });
  });
});

describe('a create is not retried blindly', () => {
  it('not on a 5xx (the task may exist)', async () => {
    const { fetch, calls } = scripted(json(500, { error: { code: 'internal_error', message: 'boom' } }, FAST), json(200, videoTask()));
    expect(await rejection(client(fetch).videos.create(PARAMS))).toBeInstanceOf(ServerError);
    expect(calls).toHaveLength(1);
  });

  it('not on a connection reset or a timeout (the request may have arrived)', async () => {
    const reset = scripted(networkError('ECONNRESET'), json(200, videoTask()));
    const error = await rejection(client(reset.fetch).videos.create(PARAMS));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ status: undefined, body: undefined });
    expect(reset.calls).toHaveLength(1);

    const slow = scripted(hang, json(200, videoTask()));
    expect(await rejection(client(slow.fetch, { timeout: 50 }).videos.create(PARAMS))).toBeInstanceOf(TimeoutError);
    expect(slow.calls).toHaveLength(1);
  });

  it('but on 429 (refused before any work) and on a refused connection (never sent)', async () => {
    const limited = scripted(
      json(429, { error: { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'wait', param: '' } }, FAST),
      json(200, videoTask()),
    );
    expect((await client(limited.fetch).videos.create(PARAMS)).id).toBe('vid_1');
    expect(limited.calls).toHaveLength(2);
    expect(limited.calls.every((call) => call.method === 'POST' && call.body === JSON.stringify(PARAMS))).toBe(true);
    expect(limited.calls[0]?.headers.get('content-type')).toBe('application/json');

    const refused = scripted(networkError('ECONNREFUSED'), json(200, { code: 'success', message: '', data: { task_id: 'img_1' } }));
    expect(await client(refused.fetch).images.create({ model: 'vendora/famz-image-spicy', prompt: 'x' })).toEqual({ task_id: 'img_1' });
    expect(refused.calls).toHaveLength(2);
  });
});

describe('timeouts and cancellation', () => {
  it('a read that never answers times out per attempt and is retried', async () => {
    const { fetch, calls } = scripted(hang);
    const error = await rejection(client(fetch, { timeout: 40, maxRetries: 1 }).videos.get('vid_1'));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(calls).toHaveLength(2);
  });

  it('the caller’s signal aborts at once, without retries', async () => {
    const { fetch, calls } = scripted(hang);
    const controller = new AbortController();
    const pending = rejection(client(fetch).videos.get('vid_1', { signal: controller.signal }));
    setTimeout(() => controller.abort(), 20);
    expect(await pending).toBeInstanceOf(AbortError);
    expect(calls).toHaveLength(1);
  });
});

describe('errors by status and family envelope', () => {
  it('maps the video envelope', async () => {
    const { fetch } = scripted(json(400, VIDEO_400, { 'x-request-id': 'req-1' }));
    const error = await rejection(client(fetch).videos.create(PARAMS));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({
      status: 400,
      code: 'unsupported_value',
      param: 'duration',
      type: 'invalid_request_error',
      requestId: 'req-1',
      body: VIDEO_400,
    });
  });

  it('maps the image envelope', async () => {
    const body = { code: 'unsupported_parameter', message: "'duration' is not a parameter", data: null };
    const { fetch } = scripted(json(400, body));
    const error = await rejection(client(fetch).images.create({ model: 'vendora/famz-image-spicy', prompt: 'x' }));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ status: 400, code: 'unsupported_parameter', param: '', type: undefined, body });
  });

  it('maps 401, 413, 415 and a non-JSON 5xx', async () => {
    const auth = scripted(json(401, { error: { type: 'authentication_error', code: 'invalid_api_key', message: 'bad key', param: 'Authorization' } }));
    expect(await rejection(client(auth.fetch).models.list())).toBeInstanceOf(AuthenticationError);
    const big = scripted(json(413, { error: { code: 'invalid_parameter', message: 'too big', param: 'body' } }));
    expect(await rejection(client(big.fetch).videos.create(PARAMS))).toMatchObject({ status: 413, code: 'invalid_parameter', param: 'body' });
    const html = scripted(() => new Response('<html>Bad Gateway</html>', { status: 502 }));
    const error = await rejectsWith(client(html.fetch, { maxRetries: 0 }).videos.get('vid_1'), ServerError);
    expect(error).toMatchObject({ status: 502, code: '', body: '<html>Bad Gateway</html>' });
    expect(error.message).toContain('HTTP 502');
  });

  it('a 2xx that is not the documented shape is an APIError, not a crash later', async () => {
    const { fetch } = scripted(() => new Response('<html>captive portal</html>', { status: 200 }));
    const error = await rejection(client(fetch).videos.get('vid_1'));
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({ status: 200 });
  });
});

describe('wait (polling: events: false; waits over events are in client-task-operations.test.ts)', () => {
  it('backs off while nothing changes, and resets when progress moves', async () => {
    const states = [
      videoTask({ status: 'processing', progress: 10 }),
      videoTask({ status: 'processing', progress: 10 }),
      videoTask({ status: 'processing', progress: 10 }),
      videoTask({ status: 'processing', progress: 10 }),
      videoTask({ status: 'processing', progress: 50 }),
      videoTask({ status: 'completed', progress: 100, outputs: [{ type: 'video', url: 'https://x.test/a.mp4' }] }),
    ];
    const { fetch, calls } = scripted(...states.map((state) => json(200, state)));
    const events: ProgressEvent<VideoTask>[] = [];
    const task = await client(fetch).videos.wait('vid_1', {
      events: false,
      pollInterval: 40,
      maxPollInterval: 1000,
      onProgress: (event) => events.push(event),
    });
    expect(task.status).toBe('completed');
    expect(events.map((event) => [event.status, event.progress])).toEqual([
      ['processing', 10],
      ['processing', 50],
      ['completed', 100],
    ]);
    expect(events.at(-1)?.outputs).toEqual(['https://x.test/a.mp4']);
    const gaps = calls.slice(1).map((call, index) => call.at - (calls[index]?.at ?? 0));
    // 40, 60, 90, 135 while unchanged; back to 40 once progress moved.
    expect(gaps[0]).toBeGreaterThanOrEqual(35);
    expect(gaps[2] ?? 0).toBeGreaterThanOrEqual(85);
    expect(gaps[3] ?? 0).toBeGreaterThanOrEqual(130);
    expect(gaps[4] ?? 0).toBeLessThan(gaps[3] ?? 0);
  });

  it('honours a Retry-After sent with a poll', async () => {
    const { fetch, calls } = scripted(
      json(200, videoTask({ status: 'processing', progress: 0 }), { 'retry-after-ms': '300' }),
      json(200, videoTask({ status: 'completed', progress: 100 })),
    );
    await client(fetch).videos.wait('vid_1', { events: false, pollInterval: 10 });
    expect((calls[1]?.at ?? 0) - (calls[0]?.at ?? 0)).toBeGreaterThanOrEqual(290);
  });

  it('throws TaskFailedError with the task’s code and param (video) or reason (image)', async () => {
    const failedVideo = videoTask({
      status: 'failed',
      progress: 0,
      error: { type: 'generation_error', code: 'invalid_input', message: 'not an image', param: 'image' },
    });
    const video = scripted(json(200, failedVideo));
    const error = await rejection(client(video.fetch).videos.wait('vid_1', { events: false }));
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error).toMatchObject({ taskId: 'vid_1', status: 'failed', code: 'invalid_input', param: 'image', message: 'not an image', task: failedVideo });

    const failedImage = {
      task_id: 'img_1',
      status: 'FAILURE',
      progress: '30%',
      outputs: [],
      submit_time: 1,
      start_time: 1,
      finish_time: 2,
      fail_reason: 'engine failed',
    };
    const image = scripted(json(200, { code: 'success', message: '', data: failedImage }));
    expect(await rejection(client(image.fetch).images.wait('img_1', { events: false }))).toMatchObject({
      taskId: 'img_1',
      status: 'failed',
      message: 'engine failed',
      task: failedImage,
    });
  });

  it('rides out a transient outage (polls failing after their own retries), but not a lasting one', async () => {
    const down = json(503, { error: { code: 'internal_error', message: 'restarting' } });
    const blip = scripted(
      json(200, videoTask({ status: 'processing', progress: 5 })),
      networkError('ECONNREFUSED'),
      down,
      down,
      json(200, videoTask({ status: 'completed', progress: 100 })),
    );
    const task = await client(blip.fetch, { maxRetries: 0 }).videos.wait('vid_1', { events: false, pollInterval: 10 });
    expect(task.status).toBe('completed');
    expect(blip.calls).toHaveLength(5);

    const gone = scripted(json(200, videoTask({ status: 'processing', progress: 5 })), networkError('ECONNREFUSED'));
    expect(await rejection(client(gone.fetch, { maxRetries: 0 }).videos.wait('vid_1', { events: false, pollInterval: 10 }))).toBeInstanceOf(ConnectionError);
    expect(gone.calls).toHaveLength(6);

    const denied = scripted(json(200, videoTask({ status: 'processing', progress: 5 })), json(401, { error: { code: 'invalid_api_key', message: 'revoked' } }));
    expect(await rejection(client(denied.fetch).videos.wait('vid_1', { events: false, pollInterval: 10 }))).toBeInstanceOf(AuthenticationError);
    expect(denied.calls).toHaveLength(2);
  });

  it('an abort while waiting is an AbortError naming the task, which keeps running', async () => {
    const { fetch } = scripted(json(200, videoTask({ status: 'processing', progress: 5 })));
    const controller = new AbortController();
    const pending = rejection(
      client(fetch).videos.wait('vid_1', { events: false, signal: controller.signal, pollInterval: 1000, onProgress: () => controller.abort() }),
    );
    const error = await pending;
    expect(error).toBeInstanceOf(AbortError);
    expect(error).toMatchObject({ taskId: 'vid_1' });
  });
});

describe('options', () => {
  const saved = { url: process.env['MEDIAGATE_BASE_URL'], key: process.env['MEDIAGATE_API_KEY'] };
  afterEach(() => {
    for (const [name, value] of [
      ['MEDIAGATE_BASE_URL', saved.url],
      ['MEDIAGATE_API_KEY', saved.key],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('default from MEDIAGATE_BASE_URL and MEDIAGATE_API_KEY; a trailing /v1 is ignored', async () => {
    process.env['MEDIAGATE_BASE_URL'] = 'https://media.example.com/v1/';
    process.env['MEDIAGATE_API_KEY'] = 'mg_from_env';
    const { fetch, calls } = scripted(json(200, { object: 'list', data: [] }));
    const mg = new Mediagate({ fetch });
    expect(mg.baseURL).toBe('https://media.example.com');
    expect(mg.maxRetries).toBe(2);
    expect(mg.timeout).toBe(60_000);
    await mg.models.list();
    expect(calls[0]?.url).toBe('https://media.example.com/v1/models');
    expect(calls[0]?.headers.get('authorization')).toBe('Bearer mg_from_env');
  });

  it('refuse a missing key, a bad URL and bad numbers at construction', () => {
    delete process.env['MEDIAGATE_API_KEY'];
    expect(() => new Mediagate()).toThrow(MediagateError);
    expect(() => new Mediagate({ apiKey: 'k', baseURL: 'ftp://x' })).toThrow(/http/);
    expect(() => new Mediagate({ apiKey: 'k', timeout: 0 })).toThrow(/timeout/);
    expect(() => new Mediagate({ apiKey: 'k', maxRetries: -1 })).toThrow(/maxRetries/);
  });

  it('never show the key when the client is logged', () => {
    const mg = new Mediagate({ apiKey: 'mg_secret_value', baseURL: 'http://x.test' });
    expect(JSON.stringify(mg)).not.toContain('mg_secret_value');
    expect(inspect(mg, { depth: 10, showHidden: true })).not.toContain('mg_secret_value');
  });

  it('model ids keep their slashes in the path', async () => {
    const info = { id: 'vendord/v6/image-to-video', object: 'model', kind: 'video', endpoint: '/v1/video/generations', description: '', schema: {} };
    const { fetch, calls } = scripted(json(200, info));
    await client(fetch).models.retrieve('vendord/v6/image-to-video');
    expect(calls[0]?.url).toBe('http://mediagate.test/v1/models/vendord/v6/image-to-video');
  });
});

/**
 * The SDK end to end against a real server (startServer: real HTTP, SQLite, workers and the
 * sandbox engine): create, get, wait with progress, typed errors from both envelopes, cross-family
 * and cross-key 404s, a task failure, cancellation of a wait (the task goes on), connection errors
 * and data-URL inputs.
 *
 * Tasks whose prompt contains `[slow]` advance in visible steps (a pacing wrapper around the
 * sandbox engine), so a wait can be interrupted while the task is still running.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejection, rejectsWith } from './helpers/rejections.js';
import {
  AbortError,
  AuthenticationError,
  ConnectionError,
  Mediagate,
  NotFoundError,
  TaskFailedError,
  ValidationError,
  bufferToDataURL,
  type Fetch,
  type ProgressEvent,
  type VideoTask,
} from '../src/client/index.js';
import { createSandboxEngine } from '../src/engines/sandbox/engine.js';
import { defaultFfmpegPath } from '../src/engines/sandbox/ffmpeg-path.js';
import { freePort } from './helpers/process.js';
import { pacedEngine } from './helpers/paced-engine.js';
import { startServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let client: Mediagate;
let other: Mediagate;

beforeAll(async () => {
  server = await startServer({}, { engine: pacedEngine(createSandboxEngine({ ffmpegPath: defaultFfmpegPath() })) });
  client = new Mediagate({ baseURL: server.url, apiKey: server.keys[0] });
  other = new Mediagate({ baseURL: server.url, apiKey: server.keys[1] });
});

afterAll(async () => {
  await server?.close();
});

const FAST = { pollInterval: 50, maxPollInterval: 200 } as const;

describe('videos', () => {
  it('create returns the queued task; createAndWait reports progress and resolves with a playable output', async () => {
    const created = await client.videos.create({ model: 'vendora/famw-2.7-t2v', prompt: 'a red fox', duration: 2, resolution: '480p', aspect_ratio: '16:9' });
    expect(created).toMatchObject({ object: 'video.generation', model: 'vendora/famw-2.7-t2v', status: 'queued', progress: null, outputs: [] });
    expect(created.id).toMatch(/^vid_/);

    const events: ProgressEvent<VideoTask>[] = [];
    const task = await client.videos.createAndWait(
      { model: 'vendora/famw-2.7-t2v', prompt: '[slow] a red fox', duration: 2, resolution: '480p' },
      { ...FAST, onProgress: (event) => events.push(event) },
    );
    expect(task.status).toBe('completed');
    expect(task.progress).toBe(100);
    expect(task.outputs).toHaveLength(1);
    const progress = events.map((event) => event.progress ?? 0);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(events.filter((event) => event.status === 'processing').length).toBeGreaterThan(2);
    expect(events.at(-1)).toMatchObject({ kind: 'video', id: task.id, status: 'completed', progress: 100, outputs: [task.outputs[0]?.url] });
    expect(events.every((event, index) => index === 0 || event.elapsedMs >= (events[index - 1]?.elapsedMs ?? 0))).toBe(true);

    const response = await fetch(task.outputs[0]?.url ?? '');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('video/mp4');
    const head = Buffer.from(await response.arrayBuffer())
      .subarray(4, 8)
      .toString('latin1');
    expect(head).toBe('ftyp');
    expect(await client.videos.get(task.id)).toEqual(task);
  });

  it('takes a local image as a data URL (first frame of an image-to-video model)', async () => {
    const png = await sharp({ create: { width: 400, height: 400, channels: 3, background: '#2277cc' } })
      .png()
      .toBuffer();
    const task = await client.videos.createAndWait(
      { model: 'vendord/v6/image-to-video', prompt: 'the sky moves', image: bufferToDataURL(png), duration: 1, resolution: '360p' },
      FAST,
    );
    expect(task.status).toBe('completed');
  });

  it('a task that fails is a TaskFailedError with the task’s code and param', async () => {
    const error = await rejectsWith(
      client.videos.createAndWait(
        { model: 'vendora/famw-2.7-i2v', prompt: 'x', image: bufferToDataURL(Buffer.from('not an image'), { mimeType: 'image/png' }) },
        FAST,
      ),
      TaskFailedError<VideoTask>,
    );
    expect(error).toMatchObject({ status: 'failed', code: 'invalid_input', param: 'image' });
    expect(error.task.error?.type).toBe('generation_error');
  });

  it('an aborted wait is an AbortError naming the task, which keeps running and can be waited for again', async () => {
    const controller = new AbortController();
    const error = await rejectsWith(
      client.videos.createAndWait(
        { model: 'vendora/famw-2.7-t2v', prompt: '[slow] abort me', duration: 2, resolution: '480p' },
        { ...FAST, signal: controller.signal, onProgress: (event) => (event.progress ?? 0) > 0 && controller.abort() },
      ),
      AbortError,
    );
    const taskId = error.taskId ?? '';
    expect(taskId).toMatch(/^vid_/);
    expect((await client.videos.get(taskId)).status).toBe('processing');
    expect((await client.videos.wait(taskId, FAST)).status).toBe('completed');
  });
});

describe('images', () => {
  it('create returns the task id; createAndWait resolves with the PNG', async () => {
    const created = await client.images.create({ model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', width: 256, height: 320 });
    expect(created.task_id).toMatch(/^img_/);
    const task = await client.images.wait(created.task_id, FAST);
    expect(task).toMatchObject({ task_id: created.task_id, status: 'SUCCESS', progress: '100%', fail_reason: '' });
    const response = await fetch(task.outputs[0] ?? '');
    expect(response.headers.get('content-type')).toContain('image/png');
    const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([256, 320]);

    const pro = await client.images.createAndWait({ model: 'vendora/famz-image-spicy-pro', prompt: 'a lighthouse', size: '300x256', seed: null }, FAST);
    expect(pro.status).toBe('SUCCESS');
  });
});

describe('typed errors from the real server', () => {
  it('validation, video envelope: code and param', async () => {
    const error = await rejectsWith(client.videos.create({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox', duration: 99 }), ValidationError);
    expect(error).toMatchObject({ status: 400, code: 'unsupported_value', param: 'duration', type: 'invalid_request_error' });
    expect(error.body).toMatchObject({ error: { code: 'unsupported_value', param: 'duration' } });
    expect(error.requestId).toMatch(/^mgc_/);

    const unsupported = await rejection(
      client.videos.createUnchecked({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox', end_image: 'https://example.com/a.png' }),
    );
    expect(unsupported).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'end_image' });
  });

  it('validation, image envelope: code (the image family has no param)', async () => {
    const error = await rejectsWith(
      client.images.createUnchecked({ model: 'vendora/famz-image-spicy', prompt: 'x', size: '512x512', width: 512 }),
      ValidationError,
    );
    expect(error).toMatchObject({ status: 400, code: 'invalid_parameter', param: '' });
    expect(error.body).toEqual({ code: 'invalid_parameter', message: expect.any(String), data: null });
  });

  it('authentication', async () => {
    const bad = new Mediagate({ baseURL: server.url, apiKey: 'mg_not_a_key' });
    const error = await rejection(bad.videos.get('vid_x'));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_api_key', param: 'Authorization' });
    expect(await rejection(bad.images.get('img_x'))).toMatchObject({ status: 401, code: 'invalid_api_key' });
  });

  it('not found: unknown ids, the other family’s ids, another key’s tasks, unknown models', async () => {
    expect(await rejection(client.videos.get('vid_doesnotexist'))).toMatchObject({ status: 404, code: 'task_not_found', param: 'task_id' });
    const { task_id } = await client.images.create({ model: 'vendora/famz-image-spicy', prompt: 'x', size: '256x256' });
    expect(await rejection(client.videos.get(task_id))).toBeInstanceOf(NotFoundError);
    expect(await rejection(other.images.get(task_id))).toBeInstanceOf(NotFoundError);
    expect(await rejection(client.models.retrieve('vendorx/none'))).toBeInstanceOf(NotFoundError);
  });

  it('connection: refused is a ConnectionError; a create is retried only because it was never sent', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    let calls = 0;
    const counting: Fetch = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const down = new Mediagate({ baseURL: url, apiKey: 'k', maxRetries: 1, fetch: counting });
    const error = await rejectsWith(down.videos.create({ model: 'vendora/famw-2.7-t2v', prompt: 'x' }), ConnectionError);
    expect(error.message).toContain('ECONNREFUSED');
    expect(calls).toBe(2);
  });
});

describe('models', () => {
  it('lists every model with its schema and retrieves one by its slashed id', async () => {
    const models = await client.models.list();
    expect(models).toHaveLength(23);
    const model = await client.models.retrieve('vendord/v6/reference-to-video');
    expect(model).toMatchObject({ id: 'vendord/v6/reference-to-video', kind: 'video', endpoint: '/v1/video/generations' });
    expect(model.schema['required']).toEqual(['model', 'prompt', 'images']);
  });
});

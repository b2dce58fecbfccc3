/**
 * The SDK's task operations (cancel, list, events, waits over events, idempotent creates,
 * webhooks) against a real HTTP server that speaks them (test/helpers/task-operations-stub.ts),
 * with faults injected on request: 5xx and dropped connections after a create, event streams cut
 * mid-way, an events route that does not exist.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ConflictError,
  Mediagate,
  MediagateError,
  NotFoundError,
  Page,
  ServerError,
  StreamError,
  TaskFailedError,
  UnprocessableEntityError,
  ValidationError,
  type ImageTask,
  type ProgressEvent,
  type VideoTask,
} from '../src/client/index.js';
import { eventually } from './helpers/eventually.js';
import { rejection } from './helpers/rejections.js';
import { startTaskOperationsStub, type TaskOperationsStub } from './helpers/task-operations-stub.js';

let stub: TaskOperationsStub;
let client: Mediagate;

beforeAll(async () => {
  stub = await startTaskOperationsStub();
});

afterAll(async () => {
  await stub?.close();
});

beforeEach(() => {
  client = new Mediagate({ baseURL: stub.url, apiKey: stub.apiKey, maxRetries: 2 });
  Object.assign(stub.faults, { createThen503: 0, createThenDrop: 0, dropStreamAfter: [], eventsUnsupported: false, events503: 0, createInUse: 0 });
});

const T2V = 'vendora/famw-2.7-t2v';
const IMG = 'vendora/famz-image-spicy-pro';

/** Collects an async iterable, advancing the stub at each item via `step`. */
async function collect<T>(items: AsyncIterable<T>, step: (item: T, index: number) => void = () => {}): Promise<T[]> {
  const seen: T[] = [];
  for await (const item of items) {
    seen.push(item);
    step(item, seen.length - 1);
  }
  return seen;
}

describe('list', () => {
  it('pages newest first with after = last_id while has_more, and the page iterates every item once', async () => {
    const ids = Array.from({ length: 7 }, (_, index) => stub.seed('video', index % 2 === 0 ? T2V : 'vendora/famw-2.7-i2v'));
    stub.seed('video', T2V, 'queued', stub.otherKey);
    const newestFirst = [...ids].reverse();

    const page = await client.videos.list({ limit: 3 });
    expect(page).toBeInstanceOf(Page);
    expect(page.data.map((task) => task.id)).toEqual(newestFirst.slice(0, 3));
    expect(page.hasMore).toBe(true);
    expect(page.lastId).toBe(newestFirst[2]);

    const before = stub.requests.length;
    const all = await collect(page);
    expect(all.map((task) => task.id)).toEqual(newestFirst.filter((id) => ids.includes(id)).slice(0, all.length));
    const mine = stub
      .tasks('video')
      .filter((task) => task.key === stub.apiKey)
      .map((task) => task.id)
      .reverse();
    expect(all.map((task) => task.id)).toEqual(mine);
    const pageRequests = stub.requests.slice(before).map((request) => request.path);
    expect(pageRequests[0]).toBe(`/v1/video/generations?limit=3&after=${newestFirst[2]}`);
    expect(pageRequests.every((path) => path.includes('limit=3&after='))).toBe(true);

    const last = await (await page.nextPage())?.nextPage();
    expect(last?.hasMore).toBe(false);
    expect(await last?.nextPage()).toBeNull();
  });

  it('passes status and model filters on every page, and refuses a bad limit with a ValidationError', async () => {
    const filtered = await collect(await client.videos.list({ status: 'queued', model: 'vendora/famw-2.7-i2v', limit: 1 }));
    expect(filtered.length).toBeGreaterThan(1);
    expect(filtered.every((task) => task.model === 'vendora/famw-2.7-i2v' && task.status === 'queued')).toBe(true);
    expect(stub.requests.at(-1)?.path).toMatch(/limit=1&after=vid_\w+&status=queued&model=vendora%2Ffamw-2.7-i2v/);
    const error = await rejection(client.videos.list({ limit: 500 }));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'limit' });
  });

  it('reads the image family’s envelope {code, message, data:{items, has_more, last_id}} and its status words', async () => {
    const ids = [stub.seed('image', IMG), stub.seed('image', IMG, 'completed'), stub.seed('image', IMG)];
    const page = await client.images.list({ limit: 2 });
    expect(page.data.map((task) => task.task_id)).toEqual([ids[2], ids[1]]);
    const all = await collect(page);
    expect(all.map((task) => task.task_id)).toEqual(
      stub
        .tasks('image')
        .filter((task) => task.key === stub.apiKey)
        .map((task) => task.id)
        .reverse(),
    );
    const done = await client.images.list({ status: 'SUCCESS' });
    expect(done.data.map((task) => task.task_id)).toEqual([ids[1]]);
    expect(done.hasMore).toBe(false);
  });
});

describe('cancel', () => {
  it('cancels a queued video task, answers it again when cancelled, and refuses a completed one with 409 task_not_cancellable', async () => {
    const id = stub.seed('video', T2V);
    const cancelled = await client.videos.cancel(id);
    expect(cancelled).toMatchObject({ id, status: 'cancelled', outputs: [] });
    expect(cancelled.completed_at).not.toBeNull();
    expect(await client.videos.cancel(id)).toMatchObject({ id, status: 'cancelled' });

    const done = stub.seed('video', T2V, 'completed');
    const error = await rejection(client.videos.cancel(done));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 409, code: 'task_not_cancellable', param: 'task_id' });
    const missing = await rejection(client.videos.cancel('vid_nope'));
    expect(missing).toBeInstanceOf(NotFoundError);
  });

  it('cancels an image task (CANCELLED) with the envelope unwrapped', async () => {
    const id = stub.seed('image', IMG);
    expect(await client.images.cancel(id)).toMatchObject({ task_id: id, status: 'CANCELLED', fail_reason: '' });
    const error = await rejection(client.images.cancel(stub.seed('image', IMG, 'failed')));
    expect(error).toMatchObject({ status: 409, code: 'task_not_cancellable' });
  });
});

describe('events', () => {
  it('yields the current state first, one state per change, and ends after the final state (heartbeats ignored)', async () => {
    const id = stub.seed('video', T2V);
    const states = await collect(client.videos.events(id), (task) => {
      if (task.status === 'queued') stub.advance(id, { status: 'processing', progress: 10 });
      else if (task.progress === 10) stub.advance(id, { progress: 60 });
      else if (task.progress === 60) stub.advance(id, { status: 'completed' });
    });
    expect(states.map((task) => `${task.status}:${task.progress}`)).toEqual(['queued:null', 'processing:10', 'processing:60', 'completed:100']);
    expect(states.at(-1)?.outputs).toHaveLength(1);
  });

  it('reconnects with Last-Event-ID after a dropped connection and misses or repeats no state', async () => {
    const id = stub.seed('video', T2V);
    stub.faults.dropStreamAfter = [2, 1];
    const stream = client.videos.events(id, { reconnectDelay: 10 });
    const states = await collect(stream, (task) => {
      const progress = task.progress ?? 0;
      if (progress < 40) stub.advance(id, { status: 'processing', progress: progress + 10 });
      else stub.advance(id, { status: 'completed' });
    });
    expect(states.map((task) => task.progress)).toEqual([null, 10, 20, 30, 40, 100]);
    const connections = stub.requestsTo(new RegExp(`${id}/events$`));
    expect(connections.map((request) => request.headers['last-event-id'])).toEqual([undefined, '2', '3']);
    expect(connections.every((request) => request.headers.accept === 'text/event-stream')).toBe(true);
    expect(stream.lastEventId).toBe('6');
  });

  it('resumes from a given lastEventId', async () => {
    const id = stub.seed('video', T2V);
    stub.advance(id, { status: 'processing', progress: 50 });
    stub.advance(id, { status: 'completed' });
    const states = await collect(client.videos.events(id, { lastEventId: '1' }));
    expect(states.map((task) => task.status)).toEqual(['processing', 'completed']);
  });

  it('unwraps the image envelope of image events', async () => {
    const id = stub.seed('image', IMG);
    const states = await collect(client.images.events(id), (task) => {
      if (task.status === 'QUEUED') stub.advance(id, { status: 'completed' });
    });
    expect(states.map((task) => task.status)).toEqual(['QUEUED', 'SUCCESS']);
  });

  it('gives up with a StreamError after repeated failed connections, and a 404 task is a NotFoundError', async () => {
    const id = stub.seed('video', T2V);
    stub.faults.events503 = 10;
    const error = await rejection(collect(client.videos.events(id, { maxReconnects: 2, reconnectDelay: 5 })));
    expect(error).toBeInstanceOf(StreamError);
    expect(stub.requestsTo(new RegExp(`${id}/events$`))).toHaveLength(3);
    expect(await rejection(collect(client.videos.events('vid_missing')))).toBeInstanceOf(NotFoundError);
  });

  it('ends with an AbortError when the signal fires', async () => {
    const id = stub.seed('video', T2V);
    const controller = new AbortController();
    const error = await rejection(collect(client.videos.events(id, { signal: controller.signal }), () => controller.abort()));
    expect(error).toMatchObject({ name: 'AbortError' });
  });
});

describe('wait and createAndWait', () => {
  it('waits over the event stream without polling, with progress events', async () => {
    const created = await client.videos.create({ model: T2V, prompt: 'a fox' });
    const events: ProgressEvent<VideoTask>[] = [];
    const waiting = client.videos.wait(created.id, { onProgress: (event) => events.push(event), pollInterval: 10 });
    await stub.streamsOpen(created.id);
    stub.advance(created.id, { status: 'processing', progress: 30 });
    stub.advance(created.id, { status: 'completed' });
    const task = await waiting;
    expect(task.status).toBe('completed');
    expect(events.map((event) => event.status)).toEqual(['queued', 'processing', 'completed']);
    expect(stub.requestsTo(new RegExp(`${created.id}$`), 'GET')).toHaveLength(0);
  });

  it('polls when the events endpoint answers 404', async () => {
    stub.faults.eventsUnsupported = true;
    const id = stub.seed('image', IMG);
    const waiting = client.images.wait(id, { pollInterval: 5, maxPollInterval: 20 });
    await eventually(() => stub.requestsTo(new RegExp(`${id}$`), 'GET').length > 0, { interval: 5, what: 'the first poll' });
    stub.advance(id, { status: 'completed' });
    const task: ImageTask = await waiting;
    expect(task.status).toBe('SUCCESS');
    expect(stub.requestsTo(new RegExp(`${id}/events$`))).toHaveLength(1);
    expect(stub.requestsTo(new RegExp(`${id}$`), 'GET').length).toBeGreaterThan(0);
  });

  it('polls when the stream keeps failing, and a failed task is a TaskFailedError', async () => {
    const id = stub.seed('video', T2V, 'failed');
    stub.faults.events503 = 100;
    const error = await rejection(client.videos.wait(id, { pollInterval: 5 }));
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error).toMatchObject({ taskId: id, status: 'failed', code: 'generation_failed' });
    expect(stub.requestsTo(new RegExp(`${id}/events$`))).toHaveLength(4);
    stub.faults.events503 = 0;
  });

  it('polls from the start with events: false', async () => {
    const id = stub.seed('video', T2V, 'completed');
    expect((await client.videos.wait(id, { events: false })).status).toBe('completed');
    expect(stub.requestsTo(new RegExp(`${id}/events$`))).toHaveLength(0);
  });
});

describe('idempotent creates', () => {
  it('with a key, a create answered 503 after the task was made is retried and replayed: one task', async () => {
    const count = stub.tasks('video').length;
    stub.faults.createThen503 = 1;
    const { data, response } = await client.videos.create({ model: T2V, prompt: 'once' }, { idempotencyKey: 'order-1' }).withResponse();
    expect(response.idempotentReplayed).toBe(true);
    expect(stub.tasks('video')).toHaveLength(count + 1);
    expect(stub.tasks('video').at(-1)?.id).toBe(data.id);
    const creates = stub.requestsTo(/^\/v1\/video\/generations$/, 'POST').slice(-2);
    expect(creates.map((request) => request.headers['idempotency-key'])).toEqual(['order-1', 'order-1']);
  });

  it('with a key, a create whose connection broke is retried: one task (image family)', async () => {
    const count = stub.tasks('image').length;
    stub.faults.createThenDrop = 1;
    const created = await client.images.create({ model: IMG, prompt: 'once' }, { idempotencyKey: 'img-order-1' });
    expect(stub.tasks('image')).toHaveLength(count + 1);
    expect(created.task_id).toBe(stub.tasks('image').at(-1)?.id);
  });

  it('with a key, 409 idempotency_key_in_use is retried; once retries run out it is a ConflictError', async () => {
    stub.faults.createInUse = 1;
    const created = await client.videos.create({ model: T2V, prompt: 'in use' }, { idempotencyKey: 'order-3' });
    expect(created.id).toBe(stub.tasks('video').at(-1)?.id);
    stub.faults.createInUse = 5;
    const error = await rejection(client.videos.create({ model: T2V, prompt: 'in use' }, { idempotencyKey: 'order-4', maxRetries: 1 }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 409, code: 'idempotency_key_in_use' });
  });

  it('without a key, a 503 create is not retried (it may have made a task)', async () => {
    stub.faults.createThen503 = 1;
    const before = stub.requestsTo(/^\/v1\/video\/generations$/, 'POST').length;
    const error = await rejection(client.videos.create({ model: T2V, prompt: 'no key' }));
    expect(error).toBeInstanceOf(ServerError);
    expect(stub.requestsTo(/^\/v1\/video\/generations$/, 'POST').length).toBe(before + 1);
  });

  it('a first use is not replayed; the same key with another body is 422 idempotency_key_reused', async () => {
    const first = await client.videos.create({ model: T2V, prompt: 'a' }, { idempotencyKey: 'order-2' }).withResponse();
    expect(first.response.idempotentReplayed).toBe(false);
    const again = await client.videos.create({ model: T2V, prompt: 'a' }, { idempotencyKey: 'order-2' }).withResponse();
    expect(again.response.idempotentReplayed).toBe(true);
    expect(again.data.id).toBe(first.data.id);
    const error = await rejection(client.videos.create({ model: T2V, prompt: 'b' }, { idempotencyKey: 'order-2' }));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
  });

  it('refuses a key that is not 1-255 printable ASCII characters before sending', async () => {
    const before = stub.requests.length;
    for (const key of ['', 'ü', 'x'.repeat(256), 'a\nb']) {
      expect(await rejection(client.videos.create({ model: T2V, prompt: 'x' }, { idempotencyKey: key }))).toBeInstanceOf(MediagateError);
    }
    expect(stub.requests.length).toBe(before);
  });

  it('createAndWait passes the key and waits over events', async () => {
    const waiting = client.videos.createAndWait({ model: T2V, prompt: 'caw' }, { idempotencyKey: 'caw-1', pollInterval: 10 });
    await eventually(() => stub.requestsTo(/^\/v1\/video\/generations$/, 'POST').at(-1)?.headers['idempotency-key'] === 'caw-1', {
      interval: 5,
      what: 'the create with its idempotency key',
    });
    const task = stub.tasks('video').at(-1);
    await stub.streamsOpen(task?.id ?? '');
    stub.advance(task?.id ?? '', { status: 'completed' });
    expect((await waiting).id).toBe(task?.id);
  });
});

describe('webhook endpoints', () => {
  it('creates (secret shown once), lists and deletes endpoints', async () => {
    const created = await client.webhooks.create({ url: 'https://hooks.example.com/mg', events: ['video.completed', 'image.failed'] });
    expect(created).toMatchObject({ url: 'https://hooks.example.com/mg', events: ['video.completed', 'image.failed'] });
    expect(created.secret).toMatch(/^whsec_/);
    const listed = await client.webhooks.list();
    expect(listed.map((endpoint) => endpoint.id)).toContain(created.id);
    expect(listed.find((endpoint) => endpoint.id === created.id)).not.toHaveProperty('secret');
    await client.webhooks.delete(created.id);
    expect((await client.webhooks.list()).map((endpoint) => endpoint.id)).not.toContain(created.id);
    expect(await rejection(client.webhooks.delete(created.id))).toBeInstanceOf(NotFoundError);
    expect(await rejection(client.webhooks.create({ url: 'http://plain.example.com' }))).toMatchObject({ status: 400, param: 'url' });
  });
});

/**
 * Live task events (decisions 8.3): `GET .../{task_id}/events` over a real server, on SQLite and
 * PostgreSQL; on PostgreSQL also a change made by a worker process reaching a stream held by
 * another process, and the task feed's LISTEN connection surviving its loss.
 */
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../src/auth/api-keys.js';
import { Mediagate } from '../src/client/index.js';
import { createInstantEngine } from '../src/engines/instant.js';
import { postgresFeed } from '../src/tasks/feed.js';
import { TaskService } from '../src/tasks/service.js';
import { openPostgresStore } from '../src/store/postgres.js';
import type { Task } from '../src/store/records.js';
import { MODELS, createValidator } from '../src/catalog/index.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type Backend, type TestDatabase } from './helpers/postgres.js';
import { startWorkerProcess, type ServiceProcess } from './helpers/process.js';
import { startServer, type TestServer } from './helpers/server.js';

interface SseEvent {
  id: string;
  event: string;
  data: string;
}

interface Stream {
  status: number;
  headers: Headers;
  events: SseEvent[];
  comments: string[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** A plain SSE reader over fetch: what a browser's EventSource sees, frame by frame. */
async function openStream(url: string, key: string, headers: Record<string, string> = {}): Promise<Stream & { body: string }> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const stream: Stream & { body: string } = {
    status: response.status,
    headers: response.headers,
    events: [],
    comments: [],
    body: '',
    ended: Promise.resolve(),
    close: () => controller.abort(),
  };
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    stream.body = await response.text();
    return stream;
  }
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  stream.ended = (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: SseEvent = { id: '', event: 'message', data: '' };
          let isEvent = false;
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) stream.comments.push(line.slice(1).trim());
            else {
              const colon = line.indexOf(':');
              const field = line.slice(0, colon);
              const value = line.slice(colon + 1).replace(/^ /, '');
              if (field === 'id') event.id = value;
              else if (field === 'event') event.event = value;
              else if (field === 'data') event.data = value;
              isEvent = true;
            }
          }
          if (isEvent) stream.events.push(event);
        }
      }
    } catch {
      // aborted by the test
    }
  })();
  return stream;
}

const VIDEO_MODEL = 'vendora/famw-2.7-t2v';
const IMAGE_MODEL = MODELS.find((row) => row.kind === 'image')!.id;

async function createVideo(server: TestServer, key = server.keys[0]): Promise<{ id: string }> {
  const response = await fetch(`${server.url}/v1/video/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: VIDEO_MODEL, prompt: 'a fox in the snow' }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { id: string };
}

async function poll(server: TestServer, path: string): Promise<unknown> {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${server.keys[0]}` } });
  return response.json();
}

const availability = await postgresAvailability();
const backends = selectedBackends().filter((backend) => backend === 'sqlite' || availability.enabled);

describe.each(backends)('task events on %s', (backend: Backend) => {
  let server: TestServer;
  let idle: TestServer;
  let database: TestDatabase | undefined;
  let idleDatabase: TestDatabase | undefined;

  beforeAll(async () => {
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    idleDatabase = backend === 'postgres' ? await createTestDatabase() : undefined;
    server = await startServer(database ? { DATABASE_URL: database.url } : {}, { engine: createInstantEngine({ delayMs: 800 }) });
    // No workers: its tasks stay queued, so its streams stay open (heartbeats, shutdown).
    idle = await startServer({ MEDIAGATE_WORKERS: 'false', MEDIAGATE_SSE_KEEPALIVE_S: '1', ...(idleDatabase ? { DATABASE_URL: idleDatabase.url } : {}) });
  });
  afterAll(async () => {
    await server?.close();
    await idle?.close();
    await database?.drop();
    await idleDatabase?.drop();
  });

  it('sends every state in order, the poll body as data, and ends after the final state', async () => {
    const { id } = await createVideo(server);
    const stream = await openStream(`${server.url}/v1/video/generations/${id}/events`, server.keys[0]);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('cache-control')).toContain('no-transform');
    expect(stream.headers.get('x-accel-buffering')).toBe('no');
    await stream.ended;
    const tasks = stream.events.map((event) => {
      expect(event.event).toBe('task');
      return JSON.parse(event.data) as { id: string; status: string; progress: number | null };
    });
    expect(tasks.length).toBeGreaterThanOrEqual(3);
    expect(tasks.at(-1)?.status).toBe('completed');
    // The final event is exactly what a poll answers now.
    expect(tasks.at(-1)).toEqual(await poll(server, `/v1/video/generations/${id}`));
    const ranks: Record<string, number> = { queued: 0, processing: 1, completed: 2 };
    const ids = stream.events.map((event) => Number(event.id));
    for (let i = 1; i < tasks.length; i++) {
      expect(ids[i]).toBeGreaterThan(ids[i - 1]!);
      expect(ranks[tasks[i]!.status]).toBeGreaterThanOrEqual(ranks[tasks[i - 1]!.status]!);
      if (tasks[i]!.status === tasks[i - 1]!.status) expect(tasks[i]!.progress ?? 0).toBeGreaterThan(tasks[i - 1]!.progress ?? 0);
    }
    // Progress moved while it ran: the instant engine reports four steps.
    expect(tasks.filter((task) => task.status === 'processing').length).toBeGreaterThanOrEqual(2);
  });

  it('streams the image family in its envelope', async () => {
    const created = await fetch(`${server.url}/v1/images/generations/async`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: IMAGE_MODEL, prompt: 'a red apple' }),
    });
    expect(created.status).toBe(200);
    const { data } = (await created.json()) as { data: { task_id: string } };
    const stream = await openStream(`${server.url}/v1/images/generations/async/${data.task_id}/events`, server.keys[0]);
    await stream.ended;
    const last = JSON.parse(stream.events.at(-1)!.data) as { code: string; data: { status: string } };
    expect(last.data.status).toBe('SUCCESS');
    expect(last).toEqual(await poll(server, `/v1/images/generations/async/${data.task_id}`));
  });

  it("answers another key's task with 404 in the family's envelope", async () => {
    const { id } = await createVideo(server);
    const video = await openStream(`${server.url}/v1/video/generations/${id}/events`, server.keys[1]);
    expect(video.status).toBe(404);
    expect(JSON.parse(video.body)).toMatchObject({ error: { code: 'task_not_found', param: 'task_id' } });
    const image = await openStream(`${server.url}/v1/images/generations/async/${id}/events`, server.keys[0]);
    expect(image.status).toBe(404);
    expect(JSON.parse(image.body)).toMatchObject({ code: 'task_not_found', data: null });
  });

  it('resumes after Last-Event-ID', async () => {
    const { id } = await createVideo(server);
    const url = `${server.url}/v1/video/generations/${id}/events`;
    const full = await openStream(url, server.keys[0]);
    await full.ended;
    const [first, , ...rest] = full.events;
    const lastId = full.events.at(-1)!.id;
    // From an early event: only what is newer, here the final state.
    const resumed = await openStream(url, server.keys[0], { 'last-event-id': first!.id });
    await resumed.ended;
    expect(resumed.events.map((event) => event.id)).toEqual([lastId]);
    expect(rest.length).toBeGreaterThanOrEqual(1);
    // From the final event: nothing more, and the stream ends.
    const done = await openStream(url, server.keys[0], { 'last-event-id': lastId });
    await done.ended;
    expect(done.events).toEqual([]);
  });

  it('sends a comment line while nothing changes', async () => {
    const { id } = await createVideo(idle);
    const stream = await openStream(`${idle.url}/v1/video/generations/${id}/events`, idle.keys[0]);
    await eventually(() => stream.comments.includes('keep-alive'), { deadline: 10_000 });
    expect(stream.events).toHaveLength(1);
    expect(JSON.parse(stream.events[0]!.data)).toMatchObject({ id, status: 'queued' });
    expect(idle.app.feed.subscribed).toBe(1);
    stream.close();
    await stream.ended;
    // The disconnect unsubscribed the stream: nothing is left listening.
    await eventually(() => idle.app.feed.subscribed === 0);
  });

  it('ends open streams when the server closes', async () => {
    const extra = await startServer({ MEDIAGATE_WORKERS: 'false', ...(idleDatabase ? { DATABASE_URL: idleDatabase.url } : {}) });
    const { id } = await createVideo(extra);
    const stream = await openStream(`${extra.url}/v1/video/generations/${id}/events`, extra.keys[0]);
    await eventually(() => stream.events.length === 1);
    await extra.close();
    await stream.ended;
  });

  it("runs the SDK's events and wait against the server", async () => {
    const client = new Mediagate({ baseURL: server.url, apiKey: server.keys[0], maxRetries: 0 });
    const task = await client.videos.create({ model: VIDEO_MODEL, prompt: 'a fox' });
    const seen: string[] = [];
    for await (const state of client.videos.events(task.id)) seen.push(state.status);
    expect(seen.at(-1)).toBe('completed');
    expect(seen).toContain('processing');
    const other = await client.videos.create({ model: VIDEO_MODEL, prompt: 'an owl' });
    // Polling every minute would outlast the test: the wait follows the stream.
    const started = Date.now();
    const done = await client.videos.wait(other.id, { pollInterval: 60_000 });
    expect(done.status).toBe('completed');
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe.skipIf(!availability.enabled)(`task events across processes (PostgreSQL) ${availability.reason}`, () => {
  let database: TestDatabase;
  let api: TestServer;
  let worker: ServiceProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    // This process serves the API and renders nothing; a `mediagate worker` child renders.
    api = await startServer({ DATABASE_URL: database.url, MEDIAGATE_WORKERS: 'false' });
  });
  afterAll(async () => {
    if (worker && worker.child.exitCode === null) worker.child.kill('SIGTERM');
    if (worker) await worker.exited;
    await api?.close();
    await database?.drop();
  });

  it('a change made by a worker process reaches a stream held by the API process', async () => {
    const { id } = await createVideo(api);
    const stream = await openStream(`${api.url}/v1/video/generations/${id}/events`, api.keys[0]);
    await eventually(() => stream.events.length >= 1);
    worker = await startWorkerProcess({
      DATABASE_URL: database.url,
      MEDIAGATE_DATA_DIR: api.dataDir,
      MEDIAGATE_API_KEYS: api.keys.join(','),
      MEDIAGATE_ENGINE: 'instant',
      MEDIAGATE_INSTANT_DELAY_MS: '800',
      MEDIAGATE_CONCURRENCY: '1',
    });
    await stream.ended;
    const statuses = stream.events.map((event) => (JSON.parse(event.data) as { status: string }).status);
    expect(statuses[0]).toBe('queued');
    expect(statuses).toContain('processing');
    expect(statuses.at(-1)).toBe('completed');
  });

  it('the feed re-reads its tasks after its LISTEN connection is lost', async () => {
    const { store } = openPostgresStore({ connectionString: database.url, poolSize: 4, onError: () => {} });
    const feed = postgresFeed({ connectionString: database.url, store, log: pino({ level: 'silent' }), reconnectMs: 1000 });
    const admin = new pg.Client({ connectionString: database.url });
    try {
      await admin.connect();
      await feed.ready();
      const service = new TaskService({ store });
      const validated = createValidator(MODELS).validate('video', { body: { model: VIDEO_MODEL, prompt: 'a cat' }, bodyBytes: 50 });
      if (!validated.ok) throw new Error(validated.error.code);
      const task = await service.create('owner-x', validated.row, validated.params);
      const seen: Task[] = [];
      const unsubscribe = feed.subscribe('owner-x', task.id, (changed) => seen.push(changed));
      const pid = feed.listenerPid;
      expect(pid).toBeTypeOf('number');
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await eventually(() => feed.listenerPid === undefined);
      // Changed while nobody listened: the reconnect's re-read delivers it.
      const claimed = await service.claimById(task.id, 'w1', 60_000, 3);
      expect(claimed).toBeDefined();
      await eventually(() => seen.some((changed) => changed.status === 'processing'), { deadline: 10_000 });
      expect(feed.listenerPid).not.toBe(pid);
      // And notifications flow again on the new connection.
      await service.complete(claimed!, []);
      await eventually(() => seen.some((changed) => changed.status === 'completed'), { deadline: 10_000 });
      unsubscribe();
      expect(feed.subscribed).toBe(0);
    } finally {
      await admin.end();
      await feed.close();
      await store.close();
    }
  });
});

describe.each(backends)('event streams per key on %s', (backend: Backend) => {
  let capped: TestServer;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    // No workers: tasks stay queued, so streams stay open until something ends them.
    capped = await startServer({ MEDIAGATE_WORKERS: 'false', MEDIAGATE_SSE_MAX_PER_KEY: '3', ...(database ? { DATABASE_URL: database.url } : {}) });
  });
  afterAll(async () => {
    await capped?.close();
    await database?.drop();
  });

  it("refuses a key's stream past its cap with 429 in the family's envelope, while another key streams and polls as before", async () => {
    const { id } = await createVideo(capped);
    const url = `${capped.url}/v1/video/generations/${id}/events`;
    const held = await Promise.all([0, 1, 2].map(() => openStream(url, capped.keys[0])));
    expect(held.map((stream) => stream.status)).toEqual([200, 200, 200]);

    const refused = await openStream(url, capped.keys[0]);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
    const image = await openStream(`${capped.url}/v1/images/generations/async/${id}/events`, capped.keys[0]);
    expect(image.status).toBe(429);
    expect(JSON.parse(image.body)).toMatchObject({ code: 'rate_limit_exceeded', data: null });

    // Another key is untouched: its stream opens and its poll answers at once.
    const other = await createVideo(capped, capped.keys[1]);
    const theirs = await openStream(`${capped.url}/v1/video/generations/${other.id}/events`, capped.keys[1]);
    expect(theirs.status).toBe(200);
    const started = performance.now();
    const polled = await fetch(`${capped.url}/v1/video/generations/${other.id}`, { headers: { authorization: `Bearer ${capped.keys[1]}` } });
    expect(polled.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(1000);

    // A closed stream gives its slot back.
    held[0]!.close();
    await held[0]!.ended;
    const again = await eventually(
      async () => {
        const stream = await openStream(url, capped.keys[0]);
        return stream.status === 200 && stream;
      },
      { deadline: 5000, what: 'a slot freed by the closed stream' },
    );
    for (const stream of [...held.slice(1), again, theirs]) stream.close();
  });

  it("ends a key's open streams within 5 s of its revocation; the next request with it is a 401", async () => {
    const key = generateKey();
    const keyId = await capped.app.keys.create(key, 'revoked while streaming');
    const { id } = await createVideo(capped, key);
    const stream = await openStream(`${capped.url}/v1/video/generations/${id}/events`, key);
    expect(stream.status).toBe(200);
    await eventually(() => stream.events.length === 1, { what: 'the first event' });
    expect(await capped.app.store.revokeKey(keyId, Date.now())).toBe(true);
    const revokedAt = performance.now();
    await stream.ended;
    // The keys of open streams are looked up again every 2 s: a stream ends at the next check.
    expect(performance.now() - revokedAt).toBeLessThan(5000);
    const refused = await fetch(`${capped.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(401);
  }, 20_000);
});

describe.each(backends)('event stream lifetime on %s', (backend: Backend) => {
  let server: TestServer;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    server = await startServer(
      { MEDIAGATE_SSE_MAX_LIFETIME_S: '1', ...(database ? { DATABASE_URL: database.url } : {}) },
      {
        // Two and a half lifetimes: a stream ends at least twice before the final state.
        engine: createInstantEngine({ delayMs: 2500 }),
      },
    );
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it('ends a stream at its lifetime; reconnecting with Last-Event-ID misses and repeats nothing up to the final state', async () => {
    const { id } = await createVideo(server);
    const url = `${server.url}/v1/video/generations/${id}/events`;
    const seen: SseEvent[] = [];
    let connections = 0;
    for (let lastId = ''; ;) {
      const started = performance.now();
      const stream = await openStream(url, server.keys[0], lastId === '' ? {} : { 'last-event-id': lastId });
      connections += 1;
      await stream.ended;
      seen.push(...stream.events);
      lastId = seen.at(-1)?.id ?? lastId;
      const last = seen.at(-1);
      if (last && (JSON.parse(last.data) as { status: string }).status === 'completed') break;
      // Not final: the stream ended at its lifetime, not earlier.
      expect(performance.now() - started).toBeGreaterThan(900);
      expect(connections).toBeLessThan(30);
    }
    expect(connections).toBeGreaterThan(1);
    const ids = seen.map((event) => Number(event.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
  }, 30_000);

  it("the SDK's events follow a task across lifetime ends to its final state", async () => {
    const client = new Mediagate({ baseURL: server.url, apiKey: server.keys[0], maxRetries: 0 });
    const task = await client.videos.create({ model: VIDEO_MODEL, prompt: 'a fox' });
    const seen: string[] = [];
    for await (const state of client.videos.events(task.id, { reconnectDelay: 50 })) seen.push(state.status);
    expect(seen.at(-1)).toBe('completed');
  }, 30_000);
});

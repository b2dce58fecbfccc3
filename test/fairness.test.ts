/**
 * Fairness between API keys (docs/operations/configuration.md#fair-scheduling-between-keys): one key's flood or slow inputs must not starve
 * another key. Store level: claims and graphile-worker jobs take the keys with work in turn
 * (fair_rank, migration 7). End to end: a key whose image inputs trickle one byte a second
 * holds only its share of the fetch stage, and another key's task runs at once, on SQLite and
 * on PostgreSQL with graphile-worker.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findModel } from '../src/catalog/index.js';
import { defaultFfmpegPath } from '../src/engines/sandbox/ffmpeg-path.js';
import { createSandboxEngine } from '../src/engines/sandbox/engine.js';
import type { Engine } from '../src/engines/types.js';
import { LocalBlobStore } from '../src/storage/local-blobs.js';
import { OutputFiles } from '../src/storage/outputs.js';
import { openBackend, type TaskBackend } from '../src/tasks/backend.js';
import { WorkerPool } from '../src/tasks/worker-pool.js';
import { TaskService } from '../src/tasks/service.js';
import { eventually } from './helpers/eventually.js';
import { startHttpsServer, type TestHttpsServer } from './helpers/https-server.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type Backend, type TestDatabase } from './helpers/postgres.js';
import { startServer, type TestServer } from './helpers/server.js';
import { openWithRaw } from './helpers/ledger.js';
import { STORE_BACKENDS, type OpenedStore } from './helpers/stores.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const row = findModel('vendora/famw-2.7-t2v');
if (!row) throw new Error('catalog row missing');

describe.each(STORE_BACKENDS)('claims take the keys with work in turn ($name)', (fixture) => {
  let opened: OpenedStore;
  let service: TaskService;

  beforeEach(async () => {
    opened = await fixture.open();
    service = new TaskService({ store: opened.store });
  });
  afterEach(async () => {
    await opened.cleanup();
  });

  it('claims a later key’s tasks among the first, whatever the earlier key queued', async () => {
    // Key A's 50 creations arrive together (group commits: batches of one key), then B's 2.
    await Promise.all(Array.from({ length: 50 }, () => service.create('key-a', row, {})));
    const b = await Promise.all(Array.from({ length: 2 }, () => service.create('key-b', row, {})));
    const owners: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const task = await service.claim('w', 60_000, 3);
      owners.push(task?.owner ?? 'none');
    }
    expect(owners).toEqual(['key-a', 'key-b', 'key-a', 'key-b', 'key-a', 'key-a']);
    expect(b.map((task) => task.id)).toHaveLength(2);
  });

  it('gives the tasks of one batch consecutive places, so the key that floods comes after the others', async () => {
    // A floods first; B and C each create one task later: each is claimed within the first three.
    await Promise.all(Array.from({ length: 30 }, () => service.create('key-a', row, {})));
    await service.create('key-b', row, {});
    await service.create('key-c', row, {});
    const first = await service.claimMany('w', 60_000, 3, 3);
    expect(new Set(first.map((task) => task.owner))).toEqual(new Set(['key-a', 'key-b', 'key-c']));
  });

  it('skips the keys a worker asks it to skip', async () => {
    await service.create('key-a', row, {});
    await service.create('key-a', row, {});
    await service.create('key-b', row, {});
    const claimed = await service.claimMany('w', 60_000, 3, 3, ['key-a']);
    expect(claimed.map((task) => task.owner)).toEqual(['key-b']);
  });
});

describe.each(STORE_BACKENDS)('the fair ranks of one insert batch ($name)', (fixture) => {
  it("continues each key from its own highest active rank and starts a newcomer at the queue's front, as the queue was before the batch", async () => {
    const { store, raw, cleanup } = await openWithRaw(fixture);
    try {
      let n = 0;
      const insert = (owner: string): Promise<unknown> => {
        n += 1;
        return store.insertTask({
          id: `vid_rank_${String(n).padStart(3, '0')}`,
          kind: 'video',
          model: 'vendora/famw-2.7-t2v',
          owner,
          params: {},
          createdAt: 1000 + n,
        });
      };
      // Key A's flood, one batch: ranks 0-4. Its first two are then claimed (still active).
      await Promise.all(Array.from({ length: 5 }, () => insert('key-a')));
      await store.claimTasks('w', 2000, 60_000, 2);
      // One batch of three keys, interleaved: A goes on after its 4, B and C start at the front (2).
      await Promise.all(['key-a', 'key-b', 'key-a', 'key-c', 'key-b'].map(insert));
      const ranks = await raw.query<{ id: string; owner: string; fair_rank: number | string }>(
        'SELECT id, owner, fair_rank FROM tasks WHERE id > $1 ORDER BY id',
        ['vid_rank_005'],
      );
      expect(ranks.map((task) => [task.owner, Number(task.fair_rank)])).toEqual([
        ['key-a', 5],
        ['key-b', 2],
        ['key-a', 6],
        ['key-c', 2],
        ['key-b', 3],
      ]);
    } finally {
      await cleanup();
    }
  });
});

/** An engine whose inputs never arrive by themselves: fetches wait for their abort. */
function slowInputsEngine() {
  const fetching: string[] = [];
  const aborted: string[] = [];
  const rendered: string[] = [];
  const engine: Engine = {
    name: 'slow-inputs',
    inputUrls: (job) => (typeof job.params['image'] === 'string' ? [job.params['image']] : []),
    fetchInputs: (job) =>
      new Promise((_resolve, reject) => {
        fetching.push(job.taskId);
        job.signal.addEventListener('abort', () => {
          aborted.push(job.taskId);
          reject(job.signal.reason as Error);
        });
      }),
    async render(job) {
      rendered.push(job.taskId);
      const path = join(job.workDir, 'out.png');
      await writeFile(path, 'image');
      return { files: [{ path, type: 'image', contentType: 'image/png', ext: 'png' }] };
    },
    async close() {},
  };
  return { engine, fetching, aborted, rendered };
}

describe.each(STORE_BACKENDS)('the fetch stage of a worker pool ($name)', (fixture) => {
  let opened: OpenedStore;
  let service: TaskService;
  let dir: string;
  let pool: WorkerPool | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mediagate-fair-'));
    opened = await fixture.open();
    service = new TaskService({ store: opened.store });
  });
  afterEach(async () => {
    await pool?.close(100);
    await opened.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it('holds a key to its fetch places, renders another key meanwhile, and aborts a cancelled fetch', async () => {
    const slow = slowInputsEngine();
    const settings = { concurrency: 1, leaseMs: 60_000, maxAttempts: 3 };
    const created = new WorkerPool({
      service,
      engine: slow.engine,
      storage: new OutputFiles(new LocalBlobStore(dir)),
      renderTimeoutMs: 60_000,
      workRoot: join(dir, 'work'),
      source: opened.backend.taskSource({ service, log: silent, pollMs: 50, reapMs: 60_000, ...settings }),
      log: silent,
      fetchConcurrency: 4,
      fetchPerKey: 1,
      ...settings,
    });
    pool = created;
    service.on('created', () => created.notify());
    await created.start();
    const a = await Promise.all([1, 2, 3].map(() => service.create('key-a', row, { image: 'https://example.com/slow.png' })));
    await eventually(() => slow.fetching.length === 1, { deadline: 10_000 });
    // One render slot, held by nobody: key B's task runs while key A's input is still on its way.
    const b = await service.create('key-b', row, {});
    await eventually(async () => (await service.get('key-b', b.id))?.status === 'completed', { deadline: 10_000 });
    expect(slow.fetching).toHaveLength(1);
    const statuses = await Promise.all(a.map(async (task) => (await service.get('key-a', task.id))?.status));
    expect(statuses.filter((status) => status === 'queued')).toHaveLength(2);
    // A cancel reaches the fetch at once, and frees the key's place for its next task.
    const first = slow.fetching[0] ?? '';
    await service.cancel('key-a', first);
    await eventually(() => slow.aborted.includes(first) && slow.fetching.length === 2, { deadline: 10_000 });
    expect((await service.get('key-a', first))?.status).toBe('cancelled');
    expect(slow.rendered).toEqual([b.id]);
  });
});

const availability = await postgresAvailability();

describe.skipIf(!availability.enabled)(`graphile-worker jobs take the keys in turn (PostgreSQL) ${availability.reason}`, () => {
  let database: TestDatabase;
  let backend: TaskBackend;
  let service: TaskService;
  let sql: pg.Pool;

  beforeEach(async () => {
    database = await createTestDatabase();
    backend = openBackend({ databaseUrl: database.url, pgPoolSize: 8, sqlitePath: '', sqliteSynchronous: 'NORMAL', log: silent });
    await backend.migrate();
    service = new TaskService({ store: backend.store });
    sql = new pg.Pool({ connectionString: database.url, max: 2 });
    sql.on('error', () => {});
  });
  afterEach(async () => {
    await sql.end();
    await backend.close();
    await database.drop();
  });

  /** The render jobs in the order graphile-worker fetches them (priority, run_at, id), with their tasks' owners. */
  const jobOrder = async () =>
    (
      await sql.query<{ owner: string; flags: string[] }>(
        `SELECT t.owner, ARRAY(SELECT jsonb_object_keys(j.flags) ORDER BY 1) AS flags
           FROM graphile_worker._private_jobs j JOIN tasks t ON t.id = j.key
          ORDER BY j.priority, j.run_at, j.id`,
      )
    ).rows;

  it('gives a later key’s jobs the front of the queue, and flags each job with its key', async () => {
    await Promise.all(Array.from({ length: 50 }, () => service.create('key-a', row, {})));
    await Promise.all(Array.from({ length: 2 }, () => service.create('key-b', row, {})));
    const jobs = await jobOrder();
    expect(jobs).toHaveLength(52);
    expect(jobs.slice(0, 4).map((job) => job.owner)).toEqual(['key-a', 'key-b', 'key-a', 'key-b']);
    expect(jobs.every((job) => job.flags.length === 1 && job.flags[0] === `key:${job.owner}`)).toBe(true);
  });

  it('flags the jobs of tasks with an https input to fetch', async () => {
    const i2v = findModel('vendora/famw-2.7-i2v');
    if (!i2v) throw new Error('catalog row missing');
    await service.create('key-a', i2v, { prompt: 'x', image: 'https://example.com/a.png' });
    await service.create('key-a', i2v, { prompt: 'mentions "image":"https://x" in text', image: 'data:image/png;base64,AAAA' });
    const flags = (await jobOrder()).map((job) => job.flags);
    expect(flags).toEqual([['fetch', 'key:key-a'], ['key:key-a']]);
  });
});

const backends = selectedBackends().filter((backend) => backend === 'sqlite' || availability.enabled);

/** A PNG header and then one byte a second, until the client goes away. */
function trickle(state: { active: number; most: number; total: number }) {
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  return (req: IncomingMessage, res: ServerResponse): void => {
    state.active += 1;
    state.total += 1;
    state.most = Math.max(state.most, state.active);
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(1024) });
    let sent = 0;
    const timer = setInterval(() => {
      res.write(png.subarray(sent % png.length, (sent % png.length) + 1));
      sent += 1;
    }, 1000);
    res.write(png.subarray(0, 1));
    res.on('close', () => {
      clearInterval(timer);
      state.active -= 1;
    });
    req.resume();
  };
}

describe.each(backends)('a key whose inputs trickle does not hold back another key (%s)', (backend: Backend) => {
  let server: TestServer;
  let inputs: TestHttpsServer;
  let database: TestDatabase | undefined;
  const state = { active: 0, most: 0, total: 0 };

  beforeAll(async () => {
    inputs = await startHttpsServer({ '/slow.png': trickle(state) });
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    server = await startServer(
      {
        MEDIAGATE_CONCURRENCY: '2',
        MEDIAGATE_FETCH_ALLOW_HOSTS: '127.0.0.1',
        ...(database ? { DATABASE_URL: database.url } : {}),
      },
      { engine: createSandboxEngine({ ffmpegPath: defaultFfmpegPath(), fetch: { dispatcher: inputs.dispatcher } }) },
    );
  });
  afterAll(async () => {
    await server?.close();
    await inputs?.close();
    await database?.drop();
  });

  const call = async (method: string, path: string, key: string, body?: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };
  const IMAGE = '/v1/images/generations/async';
  const imageStatus = async (id: string, key: string) => String(((await call('GET', `${IMAGE}/${id}`, key))['data'] as Record<string, unknown>)['status']);
  const videoStatus = async (id: string, key: string) => String((await call('GET', `/v1/video/generations/${id}`, key))['status']);

  /** Creates an image task for `key` and waits for it; its latency in ms. */
  async function imageLatency(key: string): Promise<number> {
    const started = performance.now();
    const created = await call('POST', IMAGE, key, { model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', width: 256, height: 256 });
    const id = String((created['data'] as Record<string, unknown>)['task_id']);
    await eventually(async () => (await imageStatus(id, key)) === 'SUCCESS', { deadline: 30_000, interval: 10 });
    return performance.now() - started;
  }

  it('runs the other key’s task while the first key’s tasks are still fetching', async () => {
    const [keyA, keyB] = server.keys;
    await imageLatency(keyB); // warm-up: sharp, fonts, the first statements
    const alone = await imageLatency(keyB);

    const video = { model: 'vendora/famw-2.7-i2v', prompt: 'a fox', image: `${inputs.origin}/slow.png`, duration: 2, resolution: '480p' };
    const flood = await Promise.all(Array.from({ length: 6 }, async () => String((await call('POST', '/v1/video/generations', keyA, video))['id'])));
    // Key A's fetches are under way: as many as a key may fetch at once (MEDIAGATE_FETCH_PER_KEY, 2).
    await eventually(() => state.active === 2, { deadline: 20_000 });

    const contended = await imageLatency(keyB);
    const statuses = await Promise.all(flood.map((id) => videoStatus(id, keyA)));
    // B finished while every task of A is still waiting for its input...
    expect(statuses.filter((status) => status === 'completed' || status === 'failed')).toEqual([]);
    // ...and A never fetched more than its share at once, nor held more tasks than it fetches.
    expect(state.most).toBe(2);
    expect(statuses.filter((status) => status === 'processing').length).toBeLessThanOrEqual(2);
    // B's latency stays within a small multiple of its latency alone. Strictly oldest-first
    // scheduling made it wait for A's fetches (20 s each, the fetch timeout); on PostgreSQL,
    // graphile-worker's batched local queue made it wait for an idle worker's poll (1 s) or for
    // the batch's TTL (5 s): B's job, fetched into the batch, is out of reach of workers that
    // fetch with A's key forbidden. The margin stays under one poll interval.
    expect(contended).toBeLessThan(5 * alone + 500);

    await Promise.all(flood.map((id) => call('POST', `/v1/video/generations/${id}/cancel`, keyA)));
    await eventually(() => state.active === 0, { deadline: 10_000 });
  });
});

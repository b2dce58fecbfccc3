/**
 * The media store goes away, or the worker's disk fills up, while tasks are accepted: no
 * accepted task fails for it. A finished render's files are stored again and again (the task
 * stays `processing`) until the store is back, for up to MEDIAGATE_STORAGE_RETRY_S, then the
 * task fails `storage_unavailable`; downloads answer 503 with Retry-After meanwhile; a full
 * disk hands the task back to the queue and the worker claims nothing until there is room.
 * The S3 outage is played on the run's real S3 gateway, behind a TCP proxy this spec cuts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findModel } from '../src/catalog/index.js';
import type { Engine } from '../src/engines/types.js';
import { Health } from '../src/outages.js';
import { FetchError } from '../src/outbound/client.js';
import type { BlobStore } from '../src/storage/blobs.js';
import { LocalBlobStore } from '../src/storage/local-blobs.js';
import { OutputFiles } from '../src/storage/outputs.js';
import type { TaskBackend } from '../src/tasks/backend.js';
import { TaskService } from '../src/tasks/service.js';
import { WorkerPool } from '../src/tasks/worker-pool.js';
import type { Task } from '../src/store/records.js';
import { eventually } from './helpers/eventually.js';
import { freshPrefix, s3Env, s3Target } from './helpers/s3.js';
import { startServer, type TestServer } from './helpers/server.js';
import { STORE_BACKENDS } from './helpers/stores.js';
import { startTcpProxy, throughProxy, type TcpProxy } from './helpers/tcp-proxy.js';

const row = findModel('vendora/famw-2.7-t2v');
if (!row) throw new Error('catalog row missing');
const silent = { info() {}, warn() {}, error() {} };
const VIDEO = { model: 'vendora/famw-2.7-t2v', prompt: 'a fox' } as const;
/** The least the S3 outage lasts (MEDIAGATE_TEST_OUTAGE_MS=15000 plays the 15 s of the black-box runs). */
const OUTAGE_MS = Number(process.env['MEDIAGATE_TEST_OUTAGE_MS'] ?? '0');

/** A blob store whose writes fail as an unreachable S3 gateway's do (the outbound client's network error) while `down`. */
function flakyBlobs(inner: BlobStore): { blobs: BlobStore; state: { down: boolean; refused: number } } {
  const state = { down: false, refused: 0 };
  const refuse = (): Promise<never> => {
    state.refused += 1;
    return Promise.reject(new FetchError('network', 'connect ECONNREFUSED 127.0.0.1:7480'));
  };
  const blobs: BlobStore = {
    kind: inner.kind,
    where: inner.where,
    putFile: (key, path, type) => (state.down ? refuse() : inner.putFile(key, path, type)),
    putBytes: (key, bytes, type) => (state.down ? refuse() : inner.putBytes(key, bytes, type)),
    open: (key) => inner.open(key),
    read: (key) => inner.read(key),
    delete: (key) => inner.delete(key),
    list: (prefix) => inner.list(prefix),
    close: () => inner.close(),
  };
  return { blobs, state };
}

/** Renders a small file; while `full`, fails as a render on a full disk does (ENOSPC). */
function diskEngine() {
  const state = { full: false, renders: 0 };
  const engine: Engine = {
    name: 'disk',
    async render(job) {
      state.renders += 1;
      if (state.full) throw Object.assign(new Error(`ENOSPC: no space left on device, write '${job.workDir}/out.mp4'`), { code: 'ENOSPC' });
      const path = join(job.workDir, 'out.mp4');
      await writeFile(path, 'video');
      return { files: [{ path, type: 'video', contentType: 'video/mp4', ext: 'mp4' }] };
    },
    async close() {},
  };
  return { engine, state };
}

describe.each(STORE_BACKENDS)('storage outages and a full disk in the worker pool on $name', (fixture) => {
  let dir: string;
  let backend: TaskBackend;
  let cleanup: () => Promise<void>;
  let service: TaskService;
  let health: Health;
  const pools: WorkerPool[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mediagate-outage-'));
    let store;
    ({ store, backend, cleanup } = await fixture.open());
    service = new TaskService({ store });
    health = new Health();
  });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close(100)));
    await cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  function pool(engine: Engine, blobs: BlobStore, overrides: Partial<ConstructorParameters<typeof WorkerPool>[0]> = {}): WorkerPool {
    const settings = { concurrency: 2, leaseMs: 60_000, maxAttempts: 3 };
    const created = new WorkerPool({
      service,
      engine,
      storage: new OutputFiles(blobs),
      renderTimeoutMs: 60_000,
      workRoot: join(dir, 'work'),
      source: backend.taskSource({ service, log: silent, pollMs: 50, reapMs: 60_000, health, ...settings }),
      log: silent,
      health,
      ...settings,
      ...overrides,
    });
    service.on('created', () => created.notify());
    pools.push(created);
    return created;
  }

  const status = async (task: Task) => (await service.get('o', task.id))?.status;

  it('keeps a finished task processing while its files cannot be stored, and completes it when the store is back', async () => {
    const flaky = flakyBlobs(new LocalBlobStore(dir));
    flaky.state.down = true;
    await pool(diskEngine().engine, flaky.blobs).start();
    const tasks = await Promise.all([1, 2, 3].map(() => service.create('o', row, {})));
    // Several tries of the two renders that hold the pool's slots, and none failed its task.
    await eventually(() => flaky.state.refused >= 8, { deadline: 10_000, what: 'four refused tries per render' });
    const waiting = await Promise.all(tasks.map(status));
    expect(waiting.filter((s) => s === 'processing')).toHaveLength(2);
    expect(waiting.filter((s) => s === 'failed')).toEqual([]);
    expect(health.counted('storage_write_retry')).toBeGreaterThanOrEqual(6);
    flaky.state.down = false;
    await eventually(async () => (await Promise.all(tasks.map(status))).every((s) => s === 'completed'), { deadline: 10_000, what: 'all completed' });
  });

  it('fails the task storage_unavailable once the store stayed unreachable for the whole retry window', async () => {
    const flaky = flakyBlobs(new LocalBlobStore(dir));
    flaky.state.down = true;
    await pool(diskEngine().engine, flaky.blobs, { storageRetryMs: 600 }).start();
    const task = await service.create('o', row, {});
    await eventually(async () => (await status(task)) === 'failed', { deadline: 10_000, what: 'failed after the window' });
    expect((await service.get('o', task.id))?.error).toMatchObject({ type: 'generation_error', code: 'storage_unavailable', param: '' });
    expect(flaky.state.refused).toBeGreaterThanOrEqual(2);
  });

  it('hands the task back on a full disk, claims nothing until there is room, then completes every task', async () => {
    const disk = diskEngine();
    let probes = 0;
    const diskProbe = (): Promise<boolean> => {
      probes += 1;
      return Promise.resolve(!disk.state.full);
    };
    disk.state.full = true;
    await pool(disk.engine, new LocalBlobStore(dir), { diskProbe, diskProbeMs: 50 }).start();
    const first = await service.create('o', row, {});
    await eventually(() => health.problem('disk') !== undefined, { deadline: 10_000, what: 'the disk reported full' });
    await eventually(async () => (await status(first)) === 'queued', { what: 'the task handed back' });
    const later = await Promise.all([1, 2, 3].map(() => service.create('o', row, {})));
    const rendersWhenFull = disk.state.renders;
    // Ten probes later (half a second), the pool still claimed nothing.
    const probesThen = probes;
    await eventually(() => probes >= probesThen + 10, { what: 'ten more probes' });
    expect(disk.state.renders).toBe(rendersWhenFull);
    expect(await Promise.all([first, ...later].map(status))).toEqual(['queued', 'queued', 'queued', 'queued']);
    expect(health.counted('disk_full_handback')).toBeGreaterThanOrEqual(1);

    disk.state.full = false;
    await eventually(async () => (await Promise.all([first, ...later].map(status))).every((s) => s === 'completed'), {
      deadline: 15_000,
      what: 'every task completed once there is room',
    });
    expect(health.problem('disk')).toBeUndefined();
  });
});

const s3 = s3Target();

describe.skipIf(s3.target === undefined)(`an S3 gateway outage ${s3.reason}`, () => {
  let proxy: TcpProxy | undefined;
  let server: TestServer | undefined;

  afterEach(async () => {
    await proxy?.restore();
    await server?.close();
    await proxy?.close();
    server = undefined;
    proxy = undefined;
  });

  async function start(env: Record<string, string> = {}): Promise<TestServer> {
    const target = s3.target;
    if (target === undefined) throw new Error('no S3 target');
    const endpoint = new URL(target.endpoint);
    proxy = await startTcpProxy({ host: endpoint.hostname, port: Number(endpoint.port || 80) });
    const base = s3Env(target, freshPrefix());
    server = await startServer({
      ...base,
      MEDIAGATE_S3_ENDPOINT: throughProxy(target.endpoint, proxy).replace(/\/$/, ''),
      MEDIAGATE_ENGINE: 'instant',
      ...env,
    });
    return server;
  }

  async function call(app: TestServer, method: string, path: string, body?: object) {
    const response = await fetch(app.url + path, {
      method,
      headers: { authorization: `Bearer ${app.keys[0]}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (text.startsWith('{') ? JSON.parse(text) : {}) as Record<string, unknown>,
    };
  }

  const statusOf = async (app: TestServer, id: string): Promise<string> => (await call(app, 'GET', `/v1/video/generations/${id}`)).body['status'] as string;

  it('fails no task accepted while the gateway is gone, answers downloads 503 with Retry-After, and completes all after', async () => {
    const app = await start();
    const cut = proxy as TcpProxy;
    const done = (await call(app, 'POST', '/v1/video/generations', VIDEO)).body['id'] as string;
    await eventually(async () => (await statusOf(app, done)) === 'completed', { deadline: 20_000, what: 'the first task completed' });
    const fileUrl = ((await call(app, 'GET', `/v1/video/generations/${done}`)).body['outputs'] as { url: string }[] | undefined)?.[0]?.url ?? '';
    expect((await fetch(fileUrl)).status).toBe(200);

    cut.cut();
    const cutAt = Date.now();
    const accepted: string[] = [];
    // Creates at 5 a second (polls of the first task in between) for the outage's length, 10 at least.
    while (accepted.length < 10 || Date.now() < cutAt + OUTAGE_MS) {
      if (accepted.length >= 5 * ((Date.now() - cutAt) / 1000)) {
        await call(app, 'GET', `/v1/video/generations/${done}`);
        continue;
      }
      const created = await call(app, 'POST', '/v1/video/generations', VIDEO);
      expect(created.status).toBe(200);
      accepted.push(created.body['id'] as string);
    }
    const download = await fetch(fileUrl);
    expect(download.status).toBe(503);
    expect(download.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await download.json()).toMatchObject({ error: { type: 'server_error', code: 'service_unavailable' } });
    const ready = await call(app, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ checks: { storage: expect.not.stringMatching(/^ok$/) as unknown, database: 'ok' } });
    // The renders are done and their uploads are retried: the tasks wait in `processing`, none fails.
    await eventually(async () => (await Promise.all(accepted.map((id) => statusOf(app, id)))).filter((s) => s === 'processing').length >= 2, {
      deadline: 10_000,
      what: 'renders waiting for the store',
    });
    const duringOutage = await Promise.all(accepted.map((id) => statusOf(app, id)));
    expect(duringOutage.filter((s) => s === 'failed')).toEqual([]);
    await cut.restore();
    const restoredAt = Date.now();

    await eventually(async () => (await Promise.all(accepted.map((id) => statusOf(app, id)))).every((s) => s === 'completed'), {
      deadline: 30_000,
      what: 'every task accepted during the outage completed',
    });
    expect((await fetch(fileUrl)).status).toBe(200);
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    const retries = Number(/^mediagate_storage_write_retries_total (\d+)/m.exec(metrics)?.[1] ?? '0');
    console.log(
      `S3 outage of ${((restoredAt - cutAt) / 1000).toFixed(1)} s: ${accepted.length} tasks accepted during it, 0 failed, all completed ${((Date.now() - restoredAt) / 1000).toFixed(1)} s after; ${retries} storage writes retried; download 503 + Retry-After`,
    );
    expect(retries).toBeGreaterThan(0);
  });

  it('fails a task storage_unavailable when the gateway stays away past MEDIAGATE_STORAGE_RETRY_S', async () => {
    const app = await start({ MEDIAGATE_STORAGE_RETRY_S: '1' });
    (proxy as TcpProxy).cut();
    const id = (await call(app, 'POST', '/v1/video/generations', VIDEO)).body['id'] as string;
    await eventually(async () => (await statusOf(app, id)) === 'failed', { deadline: 15_000, what: 'failed after the window' });
    expect((await call(app, 'GET', `/v1/video/generations/${id}`)).body['error']).toMatchObject({ code: 'storage_unavailable', type: 'generation_error' });
  });
});

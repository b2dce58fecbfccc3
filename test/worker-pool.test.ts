import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findModel } from '../src/catalog/index.js';
import { EngineError, type Engine, type RenderJob } from '../src/engines/types.js';
import { LocalBlobStore } from '../src/storage/local-blobs.js';
import { OutputFiles } from '../src/storage/outputs.js';
import { TaskService } from '../src/tasks/service.js';
import type { TaskBackend } from '../src/tasks/backend.js';
import type { TaskStore } from '../src/store/store.js';
import type { Task } from '../src/store/records.js';
import { WorkerPool, isDeadLocalOwner } from '../src/tasks/worker-pool.js';
import { STORE_BACKENDS } from './helpers/stores.js';
import { eventually } from './helpers/eventually.js';

const row = findModel('vendora/famw-2.7-t2v');
if (!row) throw new Error('catalog row missing');
const silent = { info() {}, warn() {}, error() {} };

/** An engine whose renders the test finishes by hand. */
function manualEngine() {
  const pending: { job: RenderJob; finish(): Promise<void>; fail(error: unknown): void }[] = [];
  const waiters: (() => void)[] = [];
  const engine: Engine = {
    name: 'manual',
    render(job) {
      return new Promise((resolve, reject) => {
        job.signal.addEventListener('abort', () => reject(job.signal.reason as Error));
        pending.push({
          job,
          async finish() {
            const path = join(job.workDir, 'out.mp4');
            await writeFile(path, 'video');
            resolve({ files: [{ path, type: 'video', contentType: 'video/mp4', ext: 'mp4' }] });
          },
          fail: reject,
        });
        waiters.splice(0).forEach((wake) => wake());
      });
    },
    async close() {},
  };
  const started = async (count: number): Promise<void> => {
    while (pending.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { engine, pending, started };
}

// On each backend the pool takes its tasks from that backend's source: the table poll (SQLite)
// or graphile-worker jobs (PostgreSQL).
describe.each(STORE_BACKENDS)('worker pool on $name', (fixture) => {
  let dir: string;
  let store: TaskStore;
  let backend: TaskBackend;
  let cleanup: () => Promise<void>;
  let service: TaskService;
  const pools: WorkerPool[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mediagate-pool-'));
    ({ store, backend, cleanup } = await fixture.open());
    service = new TaskService({ store });
  });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close(100)));
    await cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  function pool(engine: Engine, overrides: Partial<ConstructorParameters<typeof WorkerPool>[0]> = {}): WorkerPool {
    const settings = { concurrency: 2, leaseMs: 60_000, maxAttempts: 3, ...overrides };
    const created = new WorkerPool({
      service,
      engine,
      storage: new OutputFiles(new LocalBlobStore(dir)),
      renderTimeoutMs: 60_000,
      workRoot: join(dir, 'work'),
      // Takeover by the reaper has its own spec (pg-queue.test.ts); here a lease is only taken over by hand.
      source: backend.taskSource({ service, log: silent, pollMs: 50, reapMs: 60_000, ...settings }),
      log: silent,
      ...settings,
      ...overrides,
    });
    service.on('created', () => created.notify());
    pools.push(created);
    return created;
  }

  const status = async (task: Task) => (await service.get('o', task.id))?.status;

  describe('running tasks', () => {
    it('renders at most `concurrency` tasks at once and completes each with its stored file', async () => {
      const manual = manualEngine();
      await pool(manual.engine).start();
      const tasks = await Promise.all([1, 2, 3].map(() => service.create('o', row, {})));
      await manual.started(2);
      expect(manual.pending).toHaveLength(2);
      await manual.pending[0]?.finish();
      await manual.started(3);
      await Promise.all(manual.pending.slice(1).map((p) => p.finish()));
      await eventually(async () => (await Promise.all(tasks.map(status))).every((s) => s === 'completed'));
      const done = await service.get('o', tasks[0]?.id ?? '');
      expect(done?.outputs[0]?.key).toMatch(new RegExp(`^${tasks[0]?.id}/[A-Za-z0-9_-]+\\.mp4$`));
      expect(await new OutputFiles(new LocalBlobStore(dir)).open(done?.outputs[0]?.key ?? '')).toBeDefined();
    });

    it('reports progress from the engine, rising', async () => {
      const manual = manualEngine();
      await pool(manual.engine).start();
      const task = await service.create('o', row, {});
      await manual.started(1);
      manual.pending[0]?.job.onProgress(37);
      await eventually(async () => (await service.get('o', task.id))?.progress === 37);
      await manual.pending[0]?.finish();
      await eventually(async () => (await status(task)) === 'completed');
      expect((await service.get('o', task.id))?.progress).toBe(100);
    });
  });

  describe('failures', () => {
    it('fails the task with the engine error code and param', async () => {
      const manual = manualEngine();
      await pool(manual.engine).start();
      const task = await service.create('o', row, {});
      await manual.started(1);
      manual.pending[0]?.fail(new EngineError('input_fetch_failed', 'image', 'could not fetch'));
      await eventually(async () => (await status(task)) === 'failed');
      expect((await service.get('o', task.id))?.error).toEqual({
        type: 'generation_error',
        code: 'input_fetch_failed',
        message: 'could not fetch',
        param: 'image',
      });
    });

    it('hides unexpected engine errors behind generation_failed', async () => {
      const manual = manualEngine();
      await pool(manual.engine).start();
      const task = await service.create('o', row, {});
      await manual.started(1);
      manual.pending[0]?.fail(new Error('secret internal detail'));
      await eventually(async () => (await status(task)) === 'failed');
      const error = (await service.get('o', task.id))?.error;
      expect(error?.code).toBe('generation_failed');
      expect(error?.message).not.toContain('secret');
    });

    it('fails a render that exceeds the time limit with code timeout', async () => {
      const manual = manualEngine();
      await pool(manual.engine, { renderTimeoutMs: 100 }).start();
      const task = await service.create('o', row, {});
      await eventually(async () => (await status(task)) === 'failed');
      expect((await service.get('o', task.id))?.error?.code).toBe('timeout');
    });
  });

  describe('leases', () => {
    it('aborts a render whose lease another worker took over, leaving the task to the new owner', async () => {
      const manual = manualEngine();
      const slow = pool(manual.engine, { leaseMs: 600 });
      await slow.start();
      const task = await service.create('o', row, {});
      await manual.started(1);
      // Another worker takes the task over as if the first had stalled past its lease.
      await store.expireLeases(slow.id, Date.now());
      const thief = await service.claim('thief', 60_000, 3);
      expect(thief?.attempt).toBe(2);
      const aborted = new Promise((resolve) => manual.pending[0]?.job.signal.addEventListener('abort', resolve));
      await aborted;
      expect(await service.complete(thief ?? (undefined as never), [])).toBe(true);
      expect(await status(task)).toBe('completed');
    });

    it('recognises the leases of dead processes on this host, and only those', () => {
      const self = `${hostname()}:${process.pid}:aaaa`;
      const exited = spawnSync(process.execPath, ['-e', '0']);
      expect(isDeadLocalOwner(`${hostname()}:${exited.pid}:bbbb`, self)).toBe(true);
      // Same pid, other id: an earlier incarnation (a container restarted as pid 1).
      expect(isDeadLocalOwner(`${hostname()}:${process.pid}:bbbb`, self)).toBe(true);
      expect(isDeadLocalOwner(self, self)).toBe(false);
      expect(isDeadLocalOwner(`${hostname()}:${process.ppid}:cccc`, self)).toBe(false);
      expect(isDeadLocalOwner(`some-other-host:${exited.pid}:dddd`, self)).toBe(false);
    });
  });

  describe('graceful shutdown', () => {
    it('hands unfinished tasks back to the queue after the drain deadline', async () => {
      const manual = manualEngine();
      const draining = pool(manual.engine);
      await draining.start();
      const task = await service.create('o', row, {});
      await manual.started(1);
      await draining.close(50);
      expect(await service.get('o', task.id)).toMatchObject({ status: 'queued', attempt: 1 });
    });

    it('lets renders that finish within the deadline complete', async () => {
      const manual = manualEngine();
      const draining = pool(manual.engine);
      await draining.start();
      const task = await service.create('o', row, {});
      await manual.started(1);
      const closing = draining.close(5000);
      await manual.pending[0]?.finish();
      await closing;
      expect(await status(task)).toBe('completed');
    });
  });
});

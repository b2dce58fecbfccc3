/**
 * The PostgreSQL task source: graphile-worker jobs name tasks, mediagate's lease decides who
 * runs them. Crashes are simulated by writing lock and lease columns directly, as a dead
 * worker leaves them; test/scale-out.test.ts kills real processes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findModel } from '../src/catalog/index.js';
import type { Engine } from '../src/engines/types.js';
import { LocalBlobStore } from '../src/storage/local-blobs.js';
import { OutputFiles } from '../src/storage/outputs.js';
import { openBackend, type TaskBackend } from '../src/tasks/backend.js';
import { RENDER_JOB } from '../src/tasks/sources/graphile.js';
import { TaskService } from '../src/tasks/service.js';
import { WorkerPool } from '../src/tasks/worker-pool.js';
import { createTestDatabase, postgresAvailability, type TestDatabase } from './helpers/postgres.js';
import { startWorkerProcess, type ServiceProcess } from './helpers/process.js';
import { eventually } from './helpers/eventually.js';

const row = findModel('vendora/famw-2.7-t2v');
if (!row) throw new Error('catalog row missing');
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const availability = await postgresAvailability();

/** An engine that finishes at once (or never, with `hold`), counting renders per task. */
function countingEngine(hold = false) {
  const renders = new Map<string, number>();
  const engine: Engine = {
    name: 'counting',
    async render(job) {
      renders.set(job.taskId, (renders.get(job.taskId) ?? 0) + 1);
      if (hold) await new Promise((_resolve, reject) => job.signal.addEventListener('abort', () => reject(job.signal.reason as Error)));
      const path = join(job.workDir, 'out.mp4');
      await writeFile(path, 'video');
      return { files: [{ path, type: 'video', contentType: 'video/mp4', ext: 'mp4' }] };
    },
    async close() {},
  };
  return { engine, renders };
}

describe.skipIf(!availability.enabled)(`graphile-worker jobs deliver tasks (PostgreSQL) ${availability.reason}`, () => {
  let database: TestDatabase;
  let backend: TaskBackend;
  let service: TaskService;
  let sql: pg.Pool;
  let dir: string;
  const pools: WorkerPool[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mediagate-pgq-'));
    database = await createTestDatabase();
    backend = openBackend({ databaseUrl: database.url, pgPoolSize: 8, sqlitePath: '', sqliteSynchronous: 'NORMAL', log: silent });
    await backend.migrate();
    service = new TaskService({ store: backend.store });
    sql = new pg.Pool({ connectionString: database.url, max: 2 });
    sql.on('error', () => {}); // connections end when the database is dropped
  });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close(100)));
    await sql.end();
    await backend.close();
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  function pool(engine: Engine, settings: { leaseMs?: number; reapMs?: number } = {}): WorkerPool {
    const options = { concurrency: 2, leaseMs: settings.leaseMs ?? 600, maxAttempts: 3 };
    const created = new WorkerPool({
      service,
      engine,
      storage: new OutputFiles(new LocalBlobStore(dir)),
      renderTimeoutMs: 60_000,
      workRoot: join(dir, 'work'),
      source: backend.taskSource({ service, log: silent, reapMs: settings.reapMs ?? 100, ...options }),
      log: silent,
      ...options,
    });
    pools.push(created);
    return created;
  }

  const jobsOf = async (id: string) => (await sql.query<{ key: string }>('SELECT key FROM graphile_worker.jobs WHERE key = $1', [id])).rows;
  const state = async (id: string) => (await service.get('o', id)) ?? { status: 'missing', attempt: -1 };
  const processing = async () => (await sql.query(`SELECT 1 FROM tasks WHERE status = 'processing'`)).rowCount ?? 0;
  /** Queued tasks whose job a worker has locked: jobs waiting in a worker's local queue. */
  const waitingLocally = async () =>
    (
      await sql.query<{ id: string }>(
        `SELECT t.id FROM tasks t JOIN graphile_worker.jobs j ON j.key = t.id WHERE t.status = 'queued' AND j.locked_at IS NOT NULL ORDER BY t.id`,
      )
    ).rows.map((r) => r.id);
  const allCompleted = async (ids: readonly string[]) => (await Promise.all(ids.map(state))).every((task) => task.status === 'completed');

  it('adds one job per task, with the task, under the task id as its key', async () => {
    const task = await service.create('o', row, {});
    const jobs = (
      await sql.query(
        'SELECT j.key, t.identifier, j.payload::jsonb AS payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id',
      )
    ).rows;
    expect(jobs).toEqual([{ key: task.id, identifier: RENDER_JOB, payload: { id: task.id } }]);
  });

  it('runs each task once, and a duplicate or late job is a no-op', async () => {
    const counting = countingEngine();
    await pool(counting.engine).start();
    const tasks = await Promise.all(Array.from({ length: 10 }, () => service.create('o', row, {})));
    await eventually(async () => (await Promise.all(tasks.map((task) => state(task.id)))).every((task) => task.status === 'completed'), { deadline: 10_000 });
    // Late and duplicate jobs for every task (no key: each one is a new job).
    for (const task of tasks) await sql.query(`SELECT graphile_worker.add_job($1, json_build_object('id', $2::text))`, [RENDER_JOB, task.id]);
    await eventually(async () => (await sql.query('SELECT 1 FROM graphile_worker.jobs')).rowCount === 0, { deadline: 10_000 });
    expect([...counting.renders.values()]).toEqual(Array.from({ length: 10 }, () => 1));
    for (const task of tasks) expect(await state(task.id)).toMatchObject({ status: 'completed', attempt: 1 });
  });

  it('takes over the task of a worker that died holding its job, once the lease expires', async () => {
    const task = await service.create('o', row, {});
    // A worker locked the job, claimed the task, and died: its lock would last 4 hours.
    await sql.query(`UPDATE graphile_worker._private_jobs SET locked_at = now(), locked_by = 'dead-worker', attempts = 1`);
    await service.claimById(task.id, 'dead-host:1:dead', 600, 3);
    const started = Date.now();
    const counting = countingEngine();
    await pool(counting.engine, { leaseMs: 600, reapMs: 100 }).start();
    await eventually(async () => (await state(task.id)).status === 'completed', { deadline: 10_000 });
    // Lease (600 ms) + a reaper pass (100 ms) + pickup, with room for a slow machine.
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await state(task.id)).toMatchObject({ attempt: 2 });
    expect(counting.renders.get(task.id)).toBe(1);
    // The dead worker's job was retired (its key moved to the new job, its retries stopped), then
    // unlocked and removed by the reaper (test/pg-dead-worker-jobs.test.ts); the new job is deleted
    // once graphile-worker records its completion (in batches), after the task settles.
    await eventually(async () => (await sql.query('SELECT 1 FROM graphile_worker.jobs')).rowCount === 0, {
      what: "the completed job and the dead worker's retired job to be deleted",
    });
  });

  it('gives a new job to a queued task whose worker died between taking its job and claiming it', async () => {
    const task = await service.create('o', row, {});
    await sql.query(`UPDATE graphile_worker._private_jobs SET locked_at = now() - interval '1 minute', locked_by = 'dead-worker', attempts = 1`);
    const counting = countingEngine();
    await pool(counting.engine).start();
    await eventually(async () => (await state(task.id)).status === 'completed', { deadline: 10_000 });
    expect(await state(task.id)).toMatchObject({ attempt: 1 });
  });

  it('leaves alone a queued task whose job is waiting, or was just taken by a live worker', async () => {
    const waiting = await service.create('o', row, {});
    const taken = await service.create('o', row, {});
    await sql.query(`UPDATE graphile_worker._private_jobs SET locked_at = now(), locked_by = 'live-worker', attempts = 1 WHERE key = $1`, [taken.id]);
    expect(await service.requeueStranded(60_000)).toEqual([]);
    expect((await jobsOf(waiting.id)).length + (await jobsOf(taken.id)).length).toBe(2);
  });

  it('hands a task back with a new job at shutdown, and another worker completes it', async () => {
    const held = countingEngine(true);
    const first = pool(held.engine, { leaseMs: 60_000 });
    await first.start();
    const task = await service.create('o', row, {});
    await eventually(async () => (await state(task.id)).status === 'processing', { deadline: 10_000 });
    await first.close(50);
    expect(await state(task.id)).toMatchObject({ status: 'queued', attempt: 1 });
    const counting = countingEngine();
    await pool(counting.engine, { leaseMs: 60_000 }).start();
    await eventually(async () => (await state(task.id)).status === 'completed', { deadline: 10_000 });
    expect(await state(task.id)).toMatchObject({ attempt: 2 });
  });

  it('fails, instead of requeueing, a task whose workers died maxAttempts times', async () => {
    const task = await service.create('o', row, {});
    await sql.query(`UPDATE graphile_worker._private_jobs SET locked_at = now(), locked_by = 'dead-worker', attempts = 1`);
    await sql.query(`UPDATE tasks SET interruptions = 2`);
    await service.claimById(task.id, 'dead-host:1:dead', 300, 3);
    await pool(countingEngine().engine, { leaseMs: 300, reapMs: 100 }).start();
    await eventually(async () => (await state(task.id)).status === 'failed', { deadline: 10_000 });
    expect((await service.get('o', task.id))?.error?.code).toBe('generation_failed');
  });

  it('returns the jobs waiting in its local queue as soon as it stops, while its renders drain', async () => {
    const held = countingEngine(true);
    // Concurrency 2: two jobs render and up to two more wait, locked, in the local queue. A long
    // lease, so that neither the reaper nor the local queue's time limit (a third of it, at most
    // 5 s) can be what unlocks them.
    const first = pool(held.engine, { leaseMs: 60_000 });
    await first.start();
    const tasks = await Promise.all(Array.from({ length: 4 }, () => service.create('o', row, {})));
    await eventually(async () => (await processing()) === 2 && (await waitingLocally()).length === 2, { deadline: 10_000 });
    const waiting = await waitingLocally();
    let closed = false;
    const closing = first.close(5000).then(() => {
      closed = true;
    });
    await eventually(async () => (await sql.query('SELECT 1 FROM graphile_worker.jobs WHERE key = ANY($1) AND locked_at IS NULL', [waiting])).rowCount === 2, {
      deadline: 2000,
    });
    expect(closed).toBe(false);
    // Another worker runs them at once, as their first attempt: the stopping one never claimed them.
    const counting = countingEngine();
    await pool(counting.engine, { leaseMs: 60_000 }).start();
    await eventually(() => allCompleted(waiting), { deadline: 10_000 });
    for (const id of waiting) expect(await state(id)).toMatchObject({ attempt: 1 });
    await closing;
    // The two renders that could not finish were handed back, and ran again there.
    await eventually(() => allCompleted(tasks.map((task) => task.id)), { deadline: 10_000 });
    for (const task of tasks) expect(counting.renders.get(task.id)).toBe(1);
  });

  it('takes over the jobs waiting in the local queue of a worker process killed with SIGKILL', async () => {
    let worker: ServiceProcess | undefined;
    try {
      worker = await startWorkerProcess({
        DATABASE_URL: database.url,
        MEDIAGATE_DATA_DIR: dir,
        MEDIAGATE_API_KEYS: 'mg_pg_queue_key_0123456789',
        MEDIAGATE_ENGINE: 'instant',
        MEDIAGATE_INSTANT_DELAY_MS: '600000',
        MEDIAGATE_CONCURRENCY: '2',
        MEDIAGATE_LEASE_S: '2',
      });
      const tasks = await Promise.all(Array.from({ length: 4 }, () => service.create('o', row, {})));
      await eventually(async () => (await processing()) === 2 && (await waitingLocally()).length === 2, { deadline: 20_000 });
      const waiting = await waitingLocally();
      worker.child.kill('SIGKILL');
      expect(await worker.exited).toBe('SIGKILL');
      const killedAt = Date.now();
      // Its jobs stay locked (for 4 hours, to graphile-worker). The reaper of this worker treats
      // a job locked for longer than a lease by a worker that never claimed its task as stranded.
      const counting = countingEngine();
      await pool(counting.engine, { leaseMs: 2000, reapMs: 100 }).start();
      await eventually(() => allCompleted(tasks.map((task) => task.id)), { deadline: 20_000 });
      // A lease after the jobs were locked (before the kill), a reaper pass and a pickup; the
      // rest is slack for a loaded machine.
      expect(Date.now() - killedAt).toBeLessThan(2000 + 5000);
      for (const id of waiting) expect(await state(id)).toMatchObject({ attempt: 1 });
      for (const task of tasks) expect(counting.renders.get(task.id)).toBe(1);
    } finally {
      worker?.child.kill('SIGKILL');
    }
  }, 60_000);
});

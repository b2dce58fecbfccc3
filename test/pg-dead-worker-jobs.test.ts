/**
 * A SIGKILLed PostgreSQL worker leaves its locked queue jobs behind:
 * graphile-worker holds a lock for 4 hours, and the jobs the reaper retired (it gives their
 * tasks new jobs) are kept as permanently failed after that. The reaper now unlocks a dead
 * worker's jobs with graphile-worker's force_unlock_workers and removes the retired ones.
 * Real processes: a worker holding renders and local-queue jobs is SIGKILLed, another starts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { findModel } from '../src/catalog/index.js';
import { openBackend, type TaskBackend } from '../src/tasks/backend.js';
import { TaskService } from '../src/tasks/service.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, type TestDatabase } from './helpers/postgres.js';
import { startWorkerProcess, type ServiceProcess } from './helpers/process.js';

const availability = await postgresAvailability();
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const row = findModel('vendora/famw-2.7-t2v');
if (!row) throw new Error('catalog row missing');
const TASKS = 6;

describe.skipIf(!availability.enabled)(`a dead worker's locked queue jobs are cleaned (PostgreSQL) ${availability.reason}`, () => {
  let database: TestDatabase | undefined;
  let backend: TaskBackend | undefined;
  let sql: pg.Pool | undefined;
  let dataDir = '';
  const workers: ServiceProcess[] = [];
  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await Promise.all(workers.map((worker) => worker.exited));
    await sql?.end();
    await backend?.close();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('after a SIGKILL, the next worker unlocks or removes every job the dead one held, and each task completes once', async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(join(tmpdir(), 'mediagate-dead-jobs-'));
    backend = openBackend({ databaseUrl: database.url, pgPoolSize: 4, sqlitePath: '', sqliteSynchronous: 'NORMAL', log: silent });
    await backend.migrate();
    const service = new TaskService({ store: backend.store });
    sql = new pg.Pool({ connectionString: database.url, max: 2 });
    sql.on('error', () => {}); // connections end when the database is dropped
    const db = sql;
    const env = { DATABASE_URL: database.url, MEDIAGATE_DATA_DIR: dataDir, MEDIAGATE_ENGINE: 'instant', MEDIAGATE_LEASE_S: '2', LOG_LEVEL: 'info' };

    // The doomed worker: two renders that would take ten minutes, and more jobs locked in its
    // local queue or its handlers waiting for a render slot (the fetch stage adds handlers).
    const doomed = await startWorkerProcess({ ...env, MEDIAGATE_CONCURRENCY: '2', MEDIAGATE_PG_LOCAL_QUEUE: '4', MEDIAGATE_INSTANT_DELAY_MS: '600000' });
    workers.push(doomed);
    const ids = (await Promise.all(Array.from({ length: TASKS }, () => service.create('o', row, {})))).map((task) => task.id);
    const lockedBy = await eventually(
      async () => {
        const running = await db.query(`SELECT 1 FROM tasks WHERE status = 'processing'`);
        const locked = await db.query<{ locked_by: string }>('SELECT locked_by FROM graphile_worker.jobs WHERE locked_at IS NOT NULL');
        return running.rowCount === 2 && (locked.rowCount ?? 0) >= 4 && [...new Set(locked.rows.map((job) => job.locked_by))];
      },
      { deadline: 20_000, what: 'the worker to run two tasks and lock at least two more jobs' },
    );
    doomed.child.kill('SIGKILL');
    expect(await doomed.exited).toBe('SIGKILL');

    const next = await startWorkerProcess({ ...env, MEDIAGATE_CONCURRENCY: '2' });
    workers.push(next);
    // Lease 2 s: the reaper runs every 666 ms, and calls a job locked over 2 s stale.
    const left = await eventually(
      async () => {
        const done = await db.query(`SELECT 1 FROM tasks WHERE status = 'completed'`);
        const held = await db.query<{ id: string }>('SELECT id FROM graphile_worker.jobs WHERE locked_by = ANY($1)', [lockedBy]);
        const jobs = await db.query<{ id: string }>('SELECT id FROM graphile_worker.jobs');
        return done.rowCount === TASKS && held.rowCount === 0 && jobs.rowCount === 0 && { jobs: jobs.rowCount };
      },
      { deadline: 30_000, interval: 100, what: "every task to complete and the dead worker's jobs to be gone" },
    );
    expect(left.jobs).toBe(0);
    expect(next.output()).toContain('unlocked the queue jobs of workers that stopped');

    // Exactly once: each task has one completion line, from the surviving worker.
    const completions = next
      .output()
      .split('\n')
      .filter((line) => line.includes('"task completed"'))
      .map((line) => (JSON.parse(line) as { task: string }).task);
    expect(completions.sort()).toEqual([...ids].sort());
  });
});

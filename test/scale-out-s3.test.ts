/**
 * Scale-out with no shared directory (docs/operations/scaling-out.md#media-on-s3): two
 * `mediagate serve --no-workers` and two `mediagate worker` processes on one PostgreSQL and one
 * S3 bucket (the real Ceph RGW of helpers/s3.ts), each process with an empty data directory of
 * its own. A worker is SIGKILLed while it uploads an output, an API process while it streams
 * one to a client; every acknowledged task completes, its output reads whole from either API
 * process (and from one started afterwards), and the bucket holds exactly the outputs the
 * tasks record: no partial object, no object of a killed attempt.
 *
 * The `instant` engine with MEDIAGATE_INSTANT_OUTPUT_BYTES makes 24 MiB outputs without a
 * render, so a task's time in `processing` is its output's write and upload.
 */
import { request as httpRequest } from 'node:http';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, type TestDatabase } from './helpers/postgres.js';
import type { ServiceProcess } from './helpers/process.js';
import { emptyPrefix, freshPrefix, listKeys, s3Env, s3Target, type S3Target } from './helpers/s3.js';
import { startScaledOut, type ScaledOut } from './helpers/scaled-out.js';

const postgres = await postgresAvailability();
const { target, reason } = s3Target();
const KEY = 'mg_scale_out_s3_key_0123456789';
const TASKS = 12;
const OUTPUT_BYTES = 24 * 1024 * 1024;

/** Reads a file from one API process: the status and the bytes, or the error that cut it. */
async function download(api: ServiceProcess, path: string): Promise<{ status: number; bytes: number; head: Buffer }> {
  const response = await fetch(`${api.url}${path}`);
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, bytes: body.length, head: body.subarray(0, 8) };
}

describe.skipIf(!postgres.enabled || target === undefined)(`scale-out on PostgreSQL and S3, no shared directory ${postgres.reason}${reason}`, () => {
  const s3 = target as S3Target;
  const prefix = freshPrefix();
  let database: TestDatabase | undefined;
  let cluster: ScaledOut | undefined;
  let sql: pg.Pool | undefined;

  afterAll(async () => {
    for (const service of cluster?.workers ?? []) service.child.kill('SIGKILL');
    await cluster?.close();
    await sql?.end();
    await database?.drop();
    if (target) await emptyPrefix(s3, prefix);
  });

  it('completes every acknowledged task through a worker killed mid-upload and an API killed mid-download', async () => {
    database = await createTestDatabase();
    sql = new pg.Pool({ connectionString: database.url, max: 2 });
    sql.on('error', () => {});
    const db = sql;
    cluster = await startScaledOut(
      {
        ...s3Env(s3, prefix),
        DATABASE_URL: database.url,
        MEDIAGATE_API_KEYS: KEY,
        MEDIAGATE_ENGINE: 'instant',
        MEDIAGATE_INSTANT_OUTPUT_BYTES: String(OUTPUT_BYTES),
        MEDIAGATE_CONCURRENCY: '2',
        MEDIAGATE_LEASE_S: '3',
        LOG_LEVEL: 'info',
      },
      { apis: 2, workers: 2 },
      { ownDataDirs: true },
    );
    const { apis, workers } = cluster;
    const [api0, api1] = apis;
    const [w0] = workers;
    if (!api0 || !api1 || !w0) throw new Error('processes did not start');

    const ids: string[] = [];
    for (let n = 0; n < TASKS; n += 1) {
      const api = n % 2 === 0 ? api0 : api1;
      const response = await fetch(`${api.url}/v1/video/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: `task ${n}` }),
      });
      expect(response.status).toBe(200);
      ids.push(((await response.json()) as { id: string }).id);
    }

    // A task in `processing` on w0 is one whose output it is writing or uploading (no render here).
    const held = await eventually(
      async () => {
        const rows = (await db.query<{ id: string }>(`SELECT id FROM tasks WHERE status = 'processing' AND lease_owner LIKE $1`, [`%:${w0.child.pid}:%`])).rows;
        return rows.length > 0 && rows.map((row) => row.id);
      },
      { deadline: 30_000, interval: 5, what: 'the worker to be uploading' },
    );
    w0.child.kill('SIGKILL');
    expect(await w0.exited).toBe('SIGKILL');
    await cluster.replaceWorker(0);

    // An API process is killed while a client downloads a 24 MiB output from it.
    const done = await eventually(
      async () => (await db.query<{ id: string; outputs: string }>(`SELECT id, outputs FROM tasks WHERE status = 'completed' LIMIT 1`)).rows[0],
      { deadline: 60_000, what: 'a completed task' },
    );
    const path = await urlPath(api1, done.id);
    const cut = new Promise<string>((resolve) => {
      const req = httpRequest(`${api0.url}${path}`, (res) => {
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > 0 && api0.child.exitCode === null && api0.child.signalCode === null) api0.child.kill('SIGKILL');
        });
        res.on('error', () => resolve(`cut after ${received} bytes`));
        res.on('aborted', () => resolve(`cut after ${received} bytes`));
        res.on('end', () => resolve(`whole: ${received} bytes`));
      });
      req.on('error', (error) => resolve(`error: ${error.message}`));
      req.end();
    });
    expect(await cut).toMatch(/^cut after \d+ bytes$/);
    expect(await api0.exited).toBe('SIGKILL');

    await eventually(async () => Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM tasks WHERE status = 'completed'`)).rows[0]?.n) === TASKS, {
      deadline: 120_000,
      what: 'every task to complete',
    });
    // The killed worker's tasks were taken over by a later attempt.
    const attempts = (await db.query<{ attempt: number }>('SELECT attempt FROM tasks WHERE id = ANY($1)', [held])).rows;
    expect(attempts.every((row) => row.attempt >= 2)).toBe(true);

    // Every output reads whole from the API that lived and from one started now, with its own empty data dir.
    const api2 = await cluster.startApi();
    const recorded = (await db.query<{ id: string; outputs: string }>('SELECT id, outputs FROM tasks')).rows;
    for (const id of ids) {
      const taskPath = await urlPath(api1, id);
      for (const api of [api1, api2]) {
        const file = await download(api, taskPath);
        expect(file.status).toBe(200);
        expect(file.bytes).toBe(OUTPUT_BYTES);
        expect(file.head.subarray(4, 8).toString()).toBe('ftyp');
      }
    }
    // The bucket, listed: exactly the outputs the tasks record (no partial upload, no killed attempt's file), and no inputs.
    const keys = recorded.flatMap(({ outputs }) => (JSON.parse(outputs) as { key: string }[]).map((output) => `outputs/${output.key}`));
    expect(keys).toHaveLength(TASKS);
    expect(await listKeys(s3, prefix)).toEqual(keys.sort());
  }, 240_000);
});

/** The path and query of a task's output URL, read through `api`. */
async function urlPath(api: ServiceProcess, id: string): Promise<string> {
  const response = await fetch(`${api.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${KEY}` } });
  const body = (await response.json()) as { outputs?: { url: string }[] };
  const url = new URL(body.outputs?.[0]?.url ?? '');
  return `${url.pathname}${url.search}`;
}

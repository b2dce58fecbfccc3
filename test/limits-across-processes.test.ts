/**
 * A key's budget and its `max_tasks_in_flight` hold exactly against a burst of creates sent
 * through two API processes at once, when the limit was set by someone else (the raw database,
 * as the CLI or another API process would) after both processes had already cached the key
 * without it: the insert's transaction reads the key under its row lock (migration 16), on
 * SQLite (two servers on one file) and on PostgreSQL (two servers on one database).
 *
 * The servers run no workers, so every accepted task stays queued and holds its reservation:
 * what the key holds afterwards is exactly what the burst was let through.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { envKeyId, postgresDatabase, sqliteDatabase, type RawDatabase } from './helpers/ledger.js';
import { createTestDatabase, postgresAvailability, type TestDatabase } from './helpers/postgres.js';
import { freePort, startProcess, type ServiceProcess } from './helpers/process.js';

const availability = await postgresAvailability();
const BUDGETED = 'mg_limits_budgeted_key_0123456789';
const LIMITED = 'mg_limits_inflight_key_0123456789';
const T2V = 'vendora/famw-2.7-t2v';
/** 0.1 + 5 s x 0.08 at 720p: what a 5 s task reserves. */
const MAX_5S = 500_000;
const BURST = 50;
const FITS = 7;
const PRICING = { currency: 'USD', models: { [T2V]: { per_task: 0.1, per_second: { '720p': 0.08, '*': 0.12 } } } };

async function create(url: string, key: string, n: number): Promise<number> {
  const response = await fetch(`${url}/v1/video/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: T2V, prompt: `task ${n}`, duration: 5 }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** BURST creates, alternating between the two servers, all in flight at once; the statuses. */
async function burst(urls: readonly string[], key: string): Promise<number[]> {
  return Promise.all(Array.from({ length: BURST }, (_, n) => create(urls[n % urls.length] ?? '', key, n)));
}

async function keyRow(db: RawDatabase, key: string): Promise<{ reserved: number; active: number; tasks: number }> {
  const [row] = await db.query<{ reserved: unknown; active_tasks: unknown }>('SELECT reserved, active_tasks FROM api_keys WHERE id = $1', [envKeyId(key)]);
  const [tasks] = await db.query<{ n: unknown }>(`SELECT count(*) AS n FROM tasks WHERE owner = $1 AND status IN ('queued', 'processing')`, [envKeyId(key)]);
  return { reserved: Number(row?.reserved), active: Number(row?.active_tasks), tasks: Number(tasks?.n) };
}

/**
 * Both servers see both keys first (one create each, before any limit: their caches now say
 * "no budget, default limit"); then the limits are set behind their backs, and each key gets
 * its burst through both servers.
 */
async function scenario(urls: readonly string[], db: RawDatabase): Promise<void> {
  for (const url of urls) {
    expect(await create(url, BUDGETED, -1)).toBe(200);
    expect(await create(url, LIMITED, -1)).toBe(200);
  }
  const warm = urls.length;
  await db.query('UPDATE api_keys SET budget = $1 WHERE id = $2', [FITS * MAX_5S, envKeyId(BUDGETED)]);
  await db.query('UPDATE api_keys SET max_tasks_in_flight = $1 WHERE id = $2', [warm + FITS, envKeyId(LIMITED)]);

  const [budgeted, limited] = await Promise.all([burst(urls, BUDGETED), burst(urls, LIMITED)]);
  expect({ accepted: budgeted.filter((s) => s === 200).length, refused: budgeted.filter((s) => s === 402).length }).toEqual({
    accepted: FITS,
    refused: BURST - FITS,
  });
  expect(await keyRow(db, BUDGETED)).toEqual({ reserved: FITS * MAX_5S, active: warm + FITS, tasks: warm + FITS });
  expect({ accepted: limited.filter((s) => s === 200).length, refused: limited.filter((s) => s === 429).length }).toEqual({
    accepted: FITS,
    refused: BURST - FITS,
  });
  expect(await keyRow(db, LIMITED)).toEqual({ reserved: 0, active: warm + FITS, tasks: warm + FITS });
}

const env = (dataDir: string): Record<string, string> => ({
  MEDIAGATE_DATA_DIR: dataDir,
  MEDIAGATE_API_KEYS: `${BUDGETED},${LIMITED}`,
  MEDIAGATE_PRICING_FILE: join(dataDir, 'pricing.json'),
  MEDIAGATE_ENGINE: 'instant',
  MEDIAGATE_RATE_LIMIT_PER_MIN: '0',
  MEDIAGATE_MAX_TASKS_IN_FLIGHT: '1000',
});

const started: ServiceProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const service of started.splice(0)) {
    service.child.kill('SIGKILL');
    await service.exited;
  }
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function twoServers(extra: Record<string, string>): Promise<{ urls: string[]; dataDir: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-limits-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  await writeFile(join(dataDir, 'pricing.json'), JSON.stringify(PRICING));
  // One after the other: the first creates the schema.
  for (let i = 0; i < 2; i += 1) {
    started.push(await startProcess(['serve', '--no-workers'], { ...env(dataDir), ...extra, PORT: String(await freePort()) }));
  }
  return { urls: started.map((service) => service.url), dataDir };
}

describe('limits hold across processes', () => {
  it('on SQLite: two servers on one file let exactly the budget and the in-flight limit through', async () => {
    const { urls, dataDir } = await twoServers({});
    const db = sqliteDatabase(join(dataDir, 'mediagate.db'));
    cleanups.push(() => db.close());
    await scenario(urls, db);
  });

  it.skipIf(!availability.enabled)(`on PostgreSQL: two servers on one database do the same ${availability.reason}`, async () => {
    const database: TestDatabase = await createTestDatabase();
    cleanups.push(() => database.drop());
    const { urls } = await twoServers({ DATABASE_URL: database.url });
    const db = postgresDatabase(database.url);
    cleanups.push(() => db.close());
    await scenario(urls, db);
  });
});

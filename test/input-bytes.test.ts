/**
 * The per-key limit on stored input bytes is a counter kept in the tasks' own transactions
 * (migration 10, docs/architecture.md "Stored input bytes per key"): a create reserves its
 * bytes in its insert, guarded by the limit, so creates at the same instant cannot pass the
 * limit together; whichever statement ends the task gives them back; a create refused or
 * beaten to its idempotency key holds nothing. And the migration counts what active tasks
 * already held.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findModel } from '../src/catalog/index.js';
import { InputStore } from '../src/storage/inputs.js';
import { LocalBlobStore } from '../src/storage/local-blobs.js';
import { migrationSteps } from '../src/store/migrations.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/store.js';
import { openBackend } from '../src/tasks/backend.js';
import { InputsOverLimit, TaskService } from '../src/tasks/service.js';
import { createTestDatabase, postgresAvailability } from './helpers/postgres.js';
import { STORE_BACKENDS } from './helpers/stores.js';
import { openSqlite } from '../src/store/sqlite-driver.js';

const row = findModel('vendora/famw-2.7-i2v');
if (!row) throw new Error('catalog row missing');

/** A data-URL image of `n` decoded bytes. */
const withBytes = (n: number): Record<string, unknown> => ({ prompt: 'p', image: `data:image/png;base64,${Buffer.alloc(n, 7).toString('base64')}` });

describe.each(STORE_BACKENDS)('stored input bytes per key on $name', (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let dir: string;
  let service: TaskService;

  beforeEach(async () => {
    ({ store, cleanup } = await backend.open());
    dir = await mkdtemp(join(tmpdir(), 'mediagate-input-bytes-'));
    service = new TaskService({ store, inputs: new InputStore({ blobs: new LocalBlobStore(dir), scratch: join(dir, 'work') }), inputBytesPerKey: 1000 });
  });
  afterEach(async () => {
    await cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it('lets exactly as many concurrent creates through as fit under the limit, and counts them', async () => {
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => service.create('k', row, withBytes(300))));
    const created = results.filter((result) => result.status === 'fulfilled');
    const refused = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
    expect(created).toHaveLength(3);
    expect(refused).toHaveLength(7);
    expect(refused.every((reason) => reason instanceof InputsOverLimit)).toBe(true);
    expect(await store.keyInputBytes('k')).toBe(900);
    // Another key has its own count; a create without data URLs reserves nothing.
    await service.create('other', row, withBytes(1000));
    await service.create('k', row, { prompt: 'by url', image: 'https://example.com/a.png' });
    expect(await store.keyInputBytes('k')).toBe(900);
    expect(await store.keyInputBytes('other')).toBe(1000);
  });

  it('takes a limit past 32 bits (a 4 GiB key limit) as it takes a small one', async () => {
    const large = new TaskService({
      store,
      inputs: new InputStore({ blobs: new LocalBlobStore(dir), scratch: join(dir, 'work') }),
      inputBytesPerKey: 4 * 1024 ** 3,
    });
    await large.create('big', row, withBytes(300));
    expect(await store.keyInputBytes('big')).toBe(300);
  });

  it('gives the bytes back when the task completes, fails or is cancelled, once each', async () => {
    const tasks = [
      await service.create('k', row, withBytes(300)),
      await service.create('k', row, withBytes(200)),
      await service.create('k', row, withBytes(100)),
    ];
    expect(await store.keyInputBytes('k')).toBe(600);
    const claimed = await service.claimMany('w', 60_000, 3, 3);
    expect(claimed).toHaveLength(3);
    const byId = new Map(claimed.map((task) => [task.id, task]));
    const [first, second, third] = tasks.map((task) => byId.get(task.id));
    if (!first || !second || !third) throw new Error('not claimed');
    expect(await service.complete(first, [])).toBe(true);
    expect(await store.keyInputBytes('k')).toBe(300);
    expect(await service.fail(second, { type: 'generation_error', code: 'generation_failed', message: 'x', param: '' })).toBe(true);
    expect(await store.keyInputBytes('k')).toBe(100);
    expect((await service.cancel('k', third.id))?.won).toBe(true);
    expect(await store.keyInputBytes('k')).toBe(0);
    // A second settle of an ended task changes nothing, and gives nothing back twice.
    expect(await service.complete(first, [])).toBe(false);
    expect((await service.cancel('k', third.id))?.won).toBe(false);
    expect(await store.keyInputBytes('k')).toBe(0);
    expect((await service.create('k', row, withBytes(1000))).status).toBe('queued');
  });

  it('counts copies published for an upstream against the key, and gives them back when the task ends', async () => {
    const task = await service.create('k', row, withBytes(300));
    const plain = await service.create('k', row, { prompt: 'by url', image: 'https://example.com/a.png' });
    // Counted whatever the limit (1000 here): the task was accepted already.
    expect(await service.countPublishedInput(task.id, 500)).toBe(true);
    expect(await service.countPublishedInput(plain.id, 400)).toBe(true);
    expect(await store.keyInputBytes('k')).toBe(1200);
    // A submission retried after a crash counts its copy again; the end gives back all of it.
    expect(await service.countPublishedInput(task.id, 500)).toBe(true);
    expect(await store.keyInputBytes('k')).toBe(1700);
    const claimed = await service.claimMany('w', 60_000, 2, 2);
    const byId = new Map(claimed.map((one) => [one.id, one]));
    const first = byId.get(task.id);
    if (!first) throw new Error('not claimed');
    expect(await service.complete(first, [])).toBe(true);
    expect(await store.keyInputBytes('k')).toBe(400);
    expect((await service.cancel('k', plain.id))?.won).toBe(true);
    expect(await store.keyInputBytes('k')).toBe(0);
    // A task that has ended counts nothing more.
    expect(await service.countPublishedInput(task.id, 100)).toBe(false);
    expect(await service.countPublishedInput('vid_no_such_task_0000000000', 100)).toBe(false);
    expect(await store.keyInputBytes('k')).toBe(0);
  });

  it('holds nothing for a create whose idempotency key a live task holds', async () => {
    const claim = { key: 'same', requestHash: 'h', expiredBefore: 0 };
    const base = { kind: 'video' as const, model: row.id, owner: 'k', params: { prompt: 'p' }, createdAt: Date.now(), inputBytes: 400, inputLimit: 1000 };
    expect(await store.insertTask({ ...base, id: 'vid_first_of_the_key_000000', idempotency: claim })).toBe('inserted');
    expect(await store.insertTask({ ...base, id: 'vid_second_of_the_key_00000', idempotency: claim })).toBe('key_taken');
    expect(await store.keyInputBytes('k')).toBe(400);
    expect(await store.insertTask({ ...base, id: 'vid_too_many_for_the_key_00', inputBytes: 700 })).toBe('inputs_over_limit');
    expect(await store.keyInputBytes('k')).toBe(400);
  });

  it('checks the input bytes before the budget, and gives the bytes back when the budget refuses', async () => {
    // 'k' has a budget of 0 (read under its row's lock at the insert), so any reservation of it is refused.
    await store.insertKey({ id: 'k', hash: 'hash-k', name: 'k', createdAt: 0 });
    await store.updateKey('k', { budget: 0 }, Date.now());
    const base = { kind: 'video' as const, model: row.id, owner: 'k', params: { prompt: 'p' }, createdAt: Date.now(), inputLimit: 1000, reserve: 1 };
    expect(await store.insertTask({ ...base, id: 'vid_over_both_limits_000000', inputBytes: 1200 })).toBe('inputs_over_limit');
    expect(await store.insertTask({ ...base, id: 'vid_over_the_budget_0000000', inputBytes: 300 })).toBe('budget_exceeded');
    expect(await store.keyInputBytes('k')).toBe(0);
  });
});

/** Migration 10's backfill: its UPDATE and INSERT, run over rows written as an older version left them. */
const backfill = (dialect: 'sqlite' | 'postgres'): readonly string[] => {
  const step = migrationSteps(dialect).find((migration) => migration.version === 10);
  if (!step) throw new Error('no migration 10');
  return step.statements.filter((text) => /^\s*(UPDATE tasks|INSERT INTO key_inputs)/.test(text));
};

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const REF = (name: string, bytes: number): string => `mediagate-input:${name};image/png;${bytes}`;
/** Rows as before migration 10: references in params, input_bytes 0, no key_inputs. */
const LEGACY_ROWS: ReadonlyArray<[string, string, string, string]> = [
  ['t1', 'a', 'queued', JSON.stringify({ prompt: REF('image', 999), image: REF('image', 100), end_image: REF('end_image', 20) })],
  ['t2', 'a', 'processing', JSON.stringify({ images: [REF('images-0', 3), 'https://example.com/x.png', REF('images-1', 4)] })],
  ['t3', 'a', 'completed', JSON.stringify({ image: REF('image', 5000) })],
  ['t4', 'b', 'queued', JSON.stringify({ audio: REF('audio', 7) })],
  ['t5', 'c', 'queued', JSON.stringify({ image: 'https://example.com/y.png' })],
];
const EXPECTED = { a: 127, b: 7 };

describe('migration 10 counts the inputs active tasks already hold (sqlite)', () => {
  it('sums the references of media fields of queued and processing tasks only', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'mediagate-backfill-'));
    try {
      const opened = openSqliteStore({ path: join(folder, 'm.db'), synchronous: 'NORMAL' });
      await opened.migrate();
      await opened.close();
      const db = openSqlite(join(folder, 'm.db'));
      const insert = db.prepare(`INSERT INTO tasks (id, kind, model, owner, status, created_at, params) VALUES (?, 'video', 'm', ?, ?, 1, ?)`);
      for (const values of LEGACY_ROWS) insert.run(...values);
      for (const text of backfill('sqlite')) db.exec(text);
      const sums = db.prepare(`SELECT owner, bytes FROM key_inputs ORDER BY owner`).all() as { owner: string; bytes: number }[];
      db.close();
      expect(Object.fromEntries(sums.map((r) => [r.owner, r.bytes]))).toEqual(EXPECTED);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe.runIf((await postgresAvailability()).enabled)('migration 10 counts the inputs active tasks already hold (postgres)', () => {
  it('sums the references of media fields of queued and processing tasks only', async () => {
    const database = await createTestDatabase();
    const client = new pg.Client({ connectionString: database.url });
    try {
      // The schema: a store migrated on this database.
      const opened = openBackend({ databaseUrl: database.url, pgPoolSize: 2, sqlitePath: '', sqliteSynchronous: 'NORMAL', log: silent });
      await opened.migrate();
      await opened.close();
      await client.connect();
      for (const values of LEGACY_ROWS) {
        await client.query(`INSERT INTO tasks (id, kind, model, owner, status, created_at, params) VALUES ($1, 'video', 'm', $2, $3, 1, $4)`, values);
      }
      for (const text of backfill('postgres')) await client.query(text);
      const sums = await client.query<{ owner: string; bytes: string }>(`SELECT owner, bytes FROM key_inputs ORDER BY owner`);
      expect(Object.fromEntries(sums.rows.map((r) => [r.owner, Number(r.bytes)]))).toEqual(EXPECTED);
    } finally {
      await client.end().catch(() => {});
      await database.drop();
    }
  });
});

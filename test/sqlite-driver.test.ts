import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findModel } from '../src/catalog/index.js';
import { TaskService } from '../src/tasks/service.js';
import { openSqlite, sqliteDrivers, type SqliteConnection, type SqliteDriverName } from '../src/store/sqlite-driver.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import type { SqliteStore } from '../src/store/sqlite-store.js';
import type { TaskError } from '../src/store/records.js';

const row = findModel('vendora/famw-2.7-t2v');
if (!row) throw new Error('catalog row missing');
const failure: TaskError = { type: 'generation_error', code: 'generation_failed', message: 'boom', param: '' };

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13);
const drivers = sqliteDrivers();
// Which drivers ran is part of the spec's output: the CI log shows it for each Node line.
console.info(`SQLite drivers on Node ${process.versions.node}: ${drivers.join(', ')}`);

describe('the SQLite driver choice', () => {
  it('prefers node:sqlite where Node has it, and never offers better-sqlite3 on Node 24 or later', () => {
    if (hasNodeSqlite) expect(drivers[0]).toBe('node:sqlite');
    else expect(drivers).toEqual(['better-sqlite3']);
    if (major >= 24) expect(drivers).toEqual(['node:sqlite']);
  });

  it('opens the store on the preferred driver by default', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mediagate-driver-'));
    try {
      const store = openSqliteStore({ path: join(dir, 'db.sqlite'), synchronous: 'NORMAL' });
      expect(store.driver).toBe(drivers[0]);
      await store.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.runIf(major >= 24)('refuses better-sqlite3 where it aborts the process', () => {
    expect(() => openSqlite(':memory:', { driver: 'better-sqlite3' })).toThrow(/better-sqlite3#1515/);
  });
});

describe.each(drivers)('SQLite connection on %s', (driver: SqliteDriverName) => {
  let db: SqliteConnection;
  beforeEach(() => {
    db = openSqlite(':memory:', { driver });
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, at INTEGER)');
  });
  afterEach(() => db.close());

  const count = (): number => (db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;

  it('binds positional values and reads rows with numbers, text and null', () => {
    expect(db.prepare('INSERT INTO t (name, at) VALUES (?, ?), (?, ?)').run('a', 1_700_000_000_123, 'b', null)).toBe(2);
    expect(db.prepare('SELECT id, name, at FROM t ORDER BY id').all()).toEqual([
      { id: 1, name: 'a', at: 1_700_000_000_123 },
      { id: 2, name: 'b', at: null },
    ]);
    expect(db.prepare('SELECT name FROM t WHERE id = ?').get(3)).toBeUndefined();
    expect(db.prepare('UPDATE t SET at = ? WHERE at IS NULL RETURNING id').all(5)).toEqual([{ id: 2 }]);
    expect(db.prepare('DELETE FROM t WHERE id = ?').run(9)).toBe(0);
  });

  it('commits a transaction function when it returns, with its arguments and result', () => {
    const insert = db.prepare('INSERT INTO t (name) VALUES (?)');
    const many = db.transaction((names: readonly string[]) => names.map((name) => insert.run(name)));
    expect(many(['a', 'b', 'c'])).toEqual([1, 1, 1]);
    expect(count()).toBe(3);
  });

  it('rolls the whole transaction back and rethrows when the function throws', () => {
    const insert = db.prepare('INSERT INTO t (id, name) VALUES (?, ?)');
    const pair = db.transaction((id: number) => {
      insert.run(id, 'first');
      insert.run(id, 'duplicate');
    });
    expect(() => pair(1)).toThrow(/UNIQUE/);
    expect(count()).toBe(0);
    db.transaction(() => insert.run(2, 'x'))();
    expect(count()).toBe(1);
  });

  it('nests a transaction as a savepoint: the inner rollback keeps the outer writes', () => {
    const insert = db.prepare('INSERT INTO t (name) VALUES (?)');
    const inner = db.transaction(() => {
      insert.run('inner');
      throw new Error('inner fails');
    });
    db.transaction(() => {
      insert.run('outer');
      expect(() => inner()).toThrow('inner fails');
      insert.run('after');
    })();
    expect(db.prepare('SELECT name FROM t ORDER BY id').all()).toEqual([{ name: 'outer' }, { name: 'after' }]);
  });

  it('rejects a transaction function that returns a promise, and writes nothing', () => {
    const insert = db.prepare('INSERT INTO t (name) VALUES (?)');
    const asyncWork = db.transaction(() => {
      insert.run('x');
      return Promise.resolve();
    });
    expect(() => asyncWork()).toThrow(TypeError);
    expect(count()).toBe(0);
  });

  it('enforces foreign keys and rejects double-quoted string literals', () => {
    db.exec('CREATE TABLE child (parent INTEGER NOT NULL REFERENCES t (id))');
    expect(() => db.prepare('INSERT INTO child (parent) VALUES (?)').run(42)).toThrow(/FOREIGN KEY/);
    expect(() => db.prepare('SELECT "no such column" AS v').get()).toThrow(/no such column/);
  });
});

describe.each(drivers)('the store on %s', (driver: SqliteDriverName) => {
  let dir: string;
  let store: SqliteStore;
  let service: TaskService;
  let clock: number;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mediagate-driver-'));
    store = openSqliteStore({ path: join(dir, 'db.sqlite'), synchronous: 'NORMAL', driver });
    await store.migrate();
    clock = 1_000_000;
    service = new TaskService({ store, now: () => clock });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs on the driver asked for, in WAL mode, with the busy timeout', () => {
    expect(store.driver).toBe(driver);
    const check = openSqlite(join(dir, 'db.sqlite'), { driver, readOnly: true });
    try {
      expect(check.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    } finally {
      check.close();
    }
  });

  it('migrates once: a second migrate applies nothing', async () => {
    expect(await store.migrate()).toEqual([]);
  });

  it('takes a task through create, claim, progress, complete, list and read', async () => {
    const tasks = await Promise.all(Array.from({ length: 30 }, (_, i) => service.create('o', row, { n: i })));
    const claimed = await service.claimMany('w1', 10_000, 3, 10);
    expect(claimed).toHaveLength(10);
    expect(claimed.every((task) => tasks.some((created) => created.id === task.id) && task.status === 'processing')).toBe(true);
    const [first, second] = claimed;
    if (!first || !second) throw new Error('claimed too few');
    expect(await service.progress(first, 40)).toBe(true);
    clock += 5;
    const outputs = [{ type: 'video' as const, key: `${first.id}/a.mp4`, contentType: 'video/mp4' }];
    expect(await Promise.all([service.complete(first, outputs), service.fail(second, failure)])).toEqual([true, true]);
    expect(await service.complete(first, outputs)).toBe(false);
    expect(await service.get('o', first.id)).toMatchObject({ status: 'completed', progress: 100, outputs, completedAt: clock, attempt: 1 });
    expect(await service.get('o', second.id)).toMatchObject({ status: 'failed', error: failure });
    expect(await store.countByStatus()).toEqual({ queued: 20, processing: 8, completed: 1, failed: 1 });
    const listed = await service.list({ owner: 'o', kind: 'video', limit: 5 });
    expect(listed).toHaveLength(5);
  });

  it('keeps an idempotency key with its task in one transaction', async () => {
    const request = { key: 'k1', requestHash: 'h1' };
    const admit = async (): Promise<void> => {};
    const created = await service.createOnce('o', row, {}, request, admit);
    expect(created.outcome).toBe('created');
    const replay = await service.createOnce('o', row, {}, request, admit);
    expect(replay).toMatchObject({ outcome: 'replayed' });
    expect(await store.countByStatus()).toEqual({ queued: 1 });
  });

  it('stores API keys and metadata', async () => {
    expect(await store.insertKey({ id: 'key_1', hash: 'h', name: 'ci', createdAt: 5 })).toBe(true);
    expect(await store.findKeyByHash('h')).toMatchObject({ id: 'key_1', revoked: false, role: 'client', disabled: false, models: null });
    expect(await store.revokeKey('key_1', 6)).toBe(true);
    expect(await store.listKeys(Date.now())).toMatchObject([{ id: 'key_1', name: 'ci', createdAt: 5, revokedAt: 6, role: 'client', budget: null }]);
    expect(await store.initMeta('instance', 'a')).toBe('a');
    expect(await store.initMeta('instance', 'b')).toBe('a');
  });
});

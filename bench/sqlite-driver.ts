/**
 * The SQLite driver this Node runs (src/store/sqlite-driver.ts), measured on the store's
 * hot paths: `npx tsx bench/sqlite-driver.ts` on each Node line to compare node:sqlite with
 * better-sqlite3. Figures are per operation, the best of three rounds (the machine is shared).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findModel } from '../src/catalog/index.js';
import { TaskService } from '../src/tasks/service.js';
import { openSqlite, sqliteDrivers } from '../src/store/sqlite-driver.js';
import { openSqliteStore } from '../src/store/sqlite.js';

const row = findModel('vendora/famw-2.7-t2v');
if (!row) throw new Error('catalog row missing');
const N = 20_000;

async function best(label: string, count: number, round: () => Promise<void> | void): Promise<void> {
  let fastest = Infinity;
  for (let i = 0; i < 3; i += 1) {
    const start = process.hrtime.bigint();
    await round();
    fastest = Math.min(fastest, Number(process.hrtime.bigint() - start) / 1000 / count);
  }
  console.log(`${label.padEnd(44)} ${fastest.toFixed(2).padStart(7)} µs`);
}

for (const driver of sqliteDrivers()) {
  console.log(`== Node ${process.versions.node}, ${driver}`);
  const dir = await mkdtemp(join(tmpdir(), 'mediagate-driver-bench-'));
  try {
    const raw = openSqlite(join(dir, 'raw.db'), { driver });
    raw.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
    raw.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, at INTEGER NOT NULL)');
    const insert = raw.prepare('INSERT INTO t (name, at) VALUES (?, ?)');
    const one = raw.transaction((i: number) => insert.run(`row ${i}`, i));
    await best('insert, one transaction each', N, () => {
      for (let i = 0; i < N; i += 1) one(i);
    });
    const many = raw.transaction((from: number) => {
      for (let i = from; i < from + N; i += 1) insert.run(`row ${i}`, i);
    });
    await best('insert, all in one transaction', N, () => many(0));
    const read = raw.prepare('SELECT id, name, at FROM t WHERE id = ?');
    await best('point read by primary key', N, () => {
      for (let i = 1; i <= N; i += 1) read.get(i);
    });
    raw.close();

    const store = openSqliteStore({ path: join(dir, 'store.db'), synchronous: 'NORMAL', driver });
    await store.migrate();
    const service = new TaskService({ store });
    const ids: string[] = [];
    await best('store: create (group commits of 100)', N, async () => {
      for (let i = 0; i < N; i += 100) {
        const tasks = await Promise.all(Array.from({ length: 100 }, () => service.create('o', row, { prompt: 'p', duration: 5 })));
        for (const task of tasks) ids.push(task.id);
      }
    });
    await best('store: get task', N, async () => {
      for (let i = 0; i < N; i += 1) await service.get('o', ids[i] ?? '');
    });
    await best('store: claim and complete, batches of 16', 3 * 1024, async () => {
      for (let i = 0; i < 3 * 64; i += 1) {
        const claimed = await service.claimMany('w', 60_000, 3, 16);
        await Promise.all(claimed.map((task) => service.complete(task, [{ type: 'video', key: `${task.id}/a.mp4`, contentType: 'video/mp4' }])));
      }
    });
    await store.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

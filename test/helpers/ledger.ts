import { envKeyId as idOfEnvKey, hashKey } from '../../src/auth/api-keys.js';
import pg from 'pg';
import { openSqlite, type SqliteConnection } from '../../src/store/sqlite-driver.js';
import type { Store } from '../../src/store/store.js';
import type { StoreFixture } from './stores.js';

/**
 * Direct access to a mediagate database for the usage specs: set a key's budget as an
 * operator's tooling would, and read back the books (keys' spent and reserved, the daily
 * rollup, the tasks' costs) to check that they agree.
 */
export interface RawDatabase {
  query<R>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  close(): Promise<void>;
}

export function sqliteDatabase(path: string): RawDatabase {
  const db: SqliteConnection = openSqlite(path);
  db.exec('PRAGMA busy_timeout = 5000');
  return {
    query<R>(sql: string, params: readonly unknown[] = []) {
      const statement = db.prepare(sql.replace(/\$\d+/g, '?'));
      return Promise.resolve(/^\s*select/i.test(sql) ? (statement.all(...params) as R[]) : (statement.run(...params), []));
    },
    close() {
      db.close();
      return Promise.resolve();
    },
  };
}

export function postgresDatabase(url: string): RawDatabase {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => {}); // connections end when the database is dropped
  return {
    async query<R>(sql: string, params: readonly unknown[] = []) {
      return (await pool.query(sql, [...params])).rows as R[];
    },
    async close() {
      await pool.end();
    },
  };
}

/** A backend's store with direct access to its database beside it; `cleanup` closes both. */
export async function openWithRaw(backend: StoreFixture): Promise<{ store: Store; raw: RawDatabase; cleanup: () => Promise<void> }> {
  const opened = await backend.open();
  const raw = 'sqlitePath' in opened.location ? sqliteDatabase(opened.location.sqlitePath) : postgresDatabase(opened.location.databaseUrl);
  return {
    store: opened.store,
    raw,
    cleanup: async () => {
      await raw.close();
      await opened.cleanup();
    },
  };
}

/** The owner id of a key given in MEDIAGATE_API_KEYS (auth/api-keys.ts). */
export function envKeyId(key: string): string {
  return idOfEnvKey(hashKey(key));
}

/** Sets a key's budget (micro-units) and period; what `PATCH /v1/admin/keys/{id}` does. */
export async function setBudget(db: RawDatabase, keyId: string, budget: number | null, period: 'day' | 'month' | null): Promise<void> {
  await db.query('UPDATE api_keys SET budget = $1, budget_period = $2 WHERE id = $3', [budget, period, keyId]);
}

const FINAL = new Set(['completed', 'failed', 'cancelled']);
const DAY_MS = 86_400_000;

function periodStartS(period: string | null, ms: number): number {
  if (period === 'day') return Math.floor(ms / DAY_MS) * 86_400;
  if (period === 'month') {
    const date = new Date(ms);
    return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / 1000;
  }
  return 0;
}

export interface KeyBooks {
  readonly id: string;
  readonly budget: number | null;
  readonly spent: number;
  readonly reserved: number;
  /** What the key's tasks final in its current `spent` period cost, summed from the tasks. */
  readonly tasksCost: number;
  /** reserved_cost of its queued and processing tasks. */
  readonly activeReserved: number;
  readonly final: number;
  readonly active: number;
}

export interface Books {
  readonly keys: readonly KeyBooks[];
  /** Rollup rows that disagree with the tasks they sum ((key, model, day): rollup vs tasks). */
  readonly rollupMismatches: readonly string[];
}

/** Reads the books of every key and checks the rollup against the tasks. */
export async function readBooks(db: RawDatabase): Promise<Books> {
  const keys = await db.query<{ id: string; budget: unknown; budget_period: string | null; spent: unknown; spent_period: unknown; reserved: unknown }>(
    'SELECT id, budget, budget_period, spent, spent_period, reserved FROM api_keys',
  );
  const tasks = await db.query<{
    owner: string;
    model: string;
    status: string;
    cost: unknown;
    usage_seconds: unknown;
    usage_images: unknown;
    completed_at: unknown;
    reserved_cost: unknown;
  }>('SELECT owner, model, status, cost, usage_seconds, usage_images, completed_at, reserved_cost FROM tasks');
  const rollup = await db.query<{ key_id: string; model: string; day: string; tasks: unknown; seconds: unknown; images: unknown; cost: unknown }>(
    'SELECT key_id, model, day, tasks, seconds, images, cost FROM usage_daily',
  );
  const fromTasks = new Map<string, [number, number, number, number]>();
  for (const task of tasks) {
    if (!FINAL.has(task.status)) continue;
    const day = new Date(Number(task.completed_at)).toISOString().slice(0, 10);
    const key = `${task.owner} ${task.model} ${day}`;
    const sums = fromTasks.get(key) ?? [0, 0, 0, 0];
    fromTasks.set(key, [sums[0] + 1, sums[1] + Number(task.usage_seconds ?? 0), sums[2] + Number(task.usage_images ?? 0), sums[3] + Number(task.cost ?? 0)]);
  }
  const rollupMismatches: string[] = [];
  const seen = new Set<string>();
  for (const row of rollup) {
    const key = `${row.key_id} ${row.model} ${row.day}`;
    seen.add(key);
    const stored = [Number(row.tasks), Number(row.seconds), Number(row.images), Number(row.cost)].join('/');
    const summed = (fromTasks.get(key) ?? [0, 0, 0, 0]).join('/');
    if (stored !== summed) rollupMismatches.push(`${key}: ${stored} vs ${summed}`);
  }
  for (const [key, sums] of fromTasks) if (!seen.has(key)) rollupMismatches.push(`${key}: missing vs ${sums.join('/')}`);
  return {
    rollupMismatches,
    keys: keys.map((key) => {
      const own = tasks.filter((task) => task.owner === key.id);
      const final = own.filter((task) => FINAL.has(task.status));
      const active = own.filter((task) => !FINAL.has(task.status));
      return {
        id: key.id,
        budget: key.budget === null ? null : Number(key.budget),
        spent: Number(key.spent),
        reserved: Number(key.reserved),
        tasksCost: final
          .filter((task) => periodStartS(key.budget_period, Number(task.completed_at)) === Number(key.spent_period))
          .reduce((sum, task) => sum + Number(task.cost ?? 0), 0),
        activeReserved: active.reduce((sum, task) => sum + Number(task.reserved_cost), 0),
        final: final.length,
        active: active.length,
      };
    }),
  };
}

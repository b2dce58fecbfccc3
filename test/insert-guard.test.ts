import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { InsertOutcome, NewTask } from '../src/store/records.js';
import type { Store } from '../src/store/store.js';
import { HOT_PATHS } from '../src/store/sql/hot-paths.js';
import { openWithRaw, setBudget, type RawDatabase } from './helpers/ledger.js';
import { STORE_BACKENDS } from './helpers/stores.js';

const KEY = 'key_guarded';

/**
 * The insert's key guard (sql/hot-paths.ts) on every backend: what a create of a key with no
 * budget, with one, at its own in-flight limit or the process default, or with no key row at
 * all is answered. On PostgreSQL a batch that needs no more than the guarded INSERT reads is one
 * statement: the full guard's transaction runs only when that INSERT refused. On SQLite a batch
 * of guarded creates reads its keys' guard rows once, in one statement, whatever it decides.
 */
describe.each(STORE_BACKENDS)('the insert key guard on $name', (backend) => {
  let store: Store;
  let raw: RawDatabase;
  let cleanup: () => Promise<void>;
  let n = 0;

  beforeEach(async () => {
    ({ store, raw, cleanup } = await openWithRaw(backend));
    await store.insertKey({ id: KEY, hash: 'hash-g', name: 'g', createdAt: 0 });
  });
  afterEach(() => cleanup());

  const insert = (guard: Partial<Pick<NewTask, 'reserve' | 'inFlightLimit'>>, owner = KEY): Promise<InsertOutcome> => {
    n += 1;
    return store.insertTask({
      id: `vid_guard_${n}`,
      kind: 'video',
      model: 'vendora/famw-2.7-t2v',
      owner,
      params: { prompt: 'x' },
      createdAt: 1000 + n,
      ...guard,
    });
  };
  const keyRow = async (): Promise<{ active_tasks: number; reserved: number }> => {
    const [row] = await raw.query<{ active_tasks: number | string; reserved: number | string }>('SELECT active_tasks, reserved FROM api_keys WHERE id = $1', [
      KEY,
    ]);
    return { active_tasks: Number(row?.active_tasks), reserved: Number(row?.reserved) };
  };
  const reservedCosts = async (): Promise<number[]> =>
    (await raw.query<{ reserved_cost: number | string }>('SELECT reserved_cost FROM tasks WHERE owner = $1 ORDER BY created_at', [KEY])).map((row) =>
      Number(row.reserved_cost),
    );
  /**
   * How many times the key rows were read on their own: on PostgreSQL the full guard's
   * transaction (the guarded batch is one statement on the pool), on SQLite the key guard's
   * statement.
   */
  const guardReads = (): (() => number) => {
    if (backend.name === 'postgres') {
      const spy = vi.spyOn(store as unknown as { transaction: (run: unknown) => Promise<unknown> }, 'transaction');
      return () => spy.mock.calls.length;
    }
    const spy = vi.spyOn(store as unknown as { rows: (op: unknown, params: unknown) => unknown }, 'rows');
    return () => spy.mock.calls.filter(([op]) => op === HOT_PATHS.guardKeys).length;
  };
  /** The reads a number of batches cost: none on PostgreSQL for batches its INSERT passed, one each on SQLite. */
  const sqliteOnly = (batches: number): number => (backend.name === 'postgres' ? 0 : batches);

  it('inserts for a key with neither budget nor limit, reserving nothing', async () => {
    const reads = guardReads();
    expect(await insert({ inFlightLimit: 0, reserve: 700 })).toBe('inserted');
    expect(await insert({ inFlightLimit: 5 })).toBe('inserted');
    expect(reads()).toBe(sqliteOnly(2));
    expect(await reservedCosts()).toEqual([0, 0]);
    expect(await keyRow()).toEqual({ active_tasks: 2, reserved: 0 });
  });

  it("refuses at the key's own in-flight limit, else at the process default, and 0 of its own is none", async () => {
    const reads = guardReads();
    await raw.query('UPDATE api_keys SET max_tasks_in_flight = 2 WHERE id = $1', [KEY]);
    expect(await insert({ inFlightLimit: 100 })).toBe('inserted');
    expect(await insert({ inFlightLimit: 100 })).toBe('inserted');
    expect(await insert({ inFlightLimit: 100 })).toBe('tasks_over_limit');
    expect(reads()).toBe(1 + sqliteOnly(2));
    await raw.query('UPDATE api_keys SET max_tasks_in_flight = NULL WHERE id = $1', [KEY]);
    expect(await insert({ inFlightLimit: 3 })).toBe('inserted');
    expect(await insert({ inFlightLimit: 3 })).toBe('tasks_over_limit');
    await raw.query('UPDATE api_keys SET max_tasks_in_flight = 0 WHERE id = $1', [KEY]);
    expect(await insert({ inFlightLimit: 3 })).toBe('inserted');
    // No guard asked for (a store-level insert): no limit applies.
    await raw.query('UPDATE api_keys SET max_tasks_in_flight = 1 WHERE id = $1', [KEY]);
    expect(await insert({})).toBe('inserted');
    expect((await keyRow()).active_tasks).toBe(5);
  });

  it('reserves against a budget set after the last create, and refuses what does not fit', async () => {
    expect(await insert({ inFlightLimit: 0, reserve: 400 })).toBe('inserted');
    await setBudget(raw, KEY, 1000, null);
    const reads = guardReads();
    expect(await insert({ inFlightLimit: 0, reserve: 400 })).toBe('inserted');
    expect(await insert({ inFlightLimit: 0, reserve: 700 })).toBe('budget_exceeded');
    // Without a maximum cost (no pricing) a budgeted key's create reserves nothing.
    expect(await insert({ inFlightLimit: 0 })).toBe('inserted');
    expect(reads()).toBe(backend.name === 'postgres' ? 2 : 3);
    expect(await reservedCosts()).toEqual([0, 400, 0]);
    expect(await keyRow()).toEqual({ active_tasks: 3, reserved: 400 });
  });

  it("counts a batch's earlier tasks of the key: of five creates in one commit at a limit of 3, three go in", async () => {
    await store.insertKey({ id: 'key_beside', hash: 'hash-b', name: 'b', createdAt: 0 });
    await raw.query('UPDATE api_keys SET max_tasks_in_flight = 3 WHERE id = $1', [KEY]);
    // Issued in one turn: one group commit holds them all, the other key's tasks between them.
    const reads = guardReads();
    const outcomes = await Promise.all([
      insert({ inFlightLimit: 100 }),
      insert({ inFlightLimit: 100 }, 'key_beside'),
      insert({ inFlightLimit: 100 }),
      insert({ inFlightLimit: 100 }),
      insert({ inFlightLimit: 100 }, 'key_beside'),
      insert({ inFlightLimit: 100 }),
      insert({ inFlightLimit: 100 }),
    ]);
    expect(outcomes).toEqual(['inserted', 'inserted', 'inserted', 'inserted', 'inserted', 'tasks_over_limit', 'tasks_over_limit']);
    // SQLite: both keys' guard rows in one read for the batch; PostgreSQL: the refused batch's full guard.
    expect(reads()).toBe(1);
    expect(await keyRow()).toEqual({ active_tasks: 3, reserved: 0 });
    const [beside] = await raw.query<{ active_tasks: number | string }>('SELECT active_tasks FROM api_keys WHERE id = $1', ['key_beside']);
    expect(Number(beside?.active_tasks)).toBe(2);
    // The count is the tasks' own: ending one frees a place for the next create.
    await raw.query("UPDATE tasks SET status = 'cancelled', completed_at = 1 WHERE id = (SELECT id FROM tasks WHERE owner = $1 ORDER BY created_at LIMIT 1)", [
      KEY,
    ]);
    expect(await keyRow()).toEqual({ active_tasks: 2, reserved: 0 });
    expect(await insert({ inFlightLimit: 100 })).toBe('inserted');
    expect(await insert({ inFlightLimit: 100 })).toBe('tasks_over_limit');
  });

  it('inserts for an owner with no key row', async () => {
    expect(await insert({ inFlightLimit: 1, reserve: 10 }, 'key_without_row')).toBe('inserted');
    expect(await insert({ inFlightLimit: 1, reserve: 10 }, 'key_without_row')).toBe('inserted');
  });
});

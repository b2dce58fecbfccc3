import { operation } from '../dialect.js';
import type { Int } from '../rows.js';

/**
 * What a create's transaction reads of its key, under the key row's lock (migration 16): its
 * active tasks, its own in-flight limit and whether it has a budget now. Read here rather than
 * from a process's key cache, so a limit or budget set by another process binds the very next
 * create, and two creates of one key in two processes read one after the other.
 */
export interface KeyGuardRow {
  id: string;
  active_tasks: Int;
  max_tasks_in_flight: Int | null;
  budgeted: Int;
}

/**
 * SQLite: one writer at a time, but a transaction begins deferred; a no-op UPDATE takes the
 * write lock before anything is read, so the figures cannot change before the commit (a read
 * first could meet another process's commit at the write: SQLITE_BUSY_SNAPSHOT).
 */
export const guardKey = operation<{ id: string }, KeyGuardRow>(
  'guard-key',
  () => `UPDATE api_keys SET active_tasks = active_tasks WHERE id = @id
      RETURNING id, active_tasks, max_tasks_in_flight, CASE WHEN budget IS NULL THEN 0 ELSE 1 END AS budgeted`,
  ['sqlite'],
);

/** PostgreSQL: a batch's keys, locked in id order (the order of the charge trigger, migration 9). */
export const guardKeys = operation<{ ids: string[] }, KeyGuardRow>(
  'guard-keys',
  () => `SELECT id, active_tasks, max_tasks_in_flight, CASE WHEN budget IS NULL THEN 0 ELSE 1 END AS budgeted
       FROM api_keys WHERE id = ANY(@ids::text[]) ORDER BY id FOR UPDATE`,
  ['postgres'],
);

/** The in-flight limit a guarded row sets: the key's own, else the process default; 0 means none. */
export function inFlightLimitOf(row: KeyGuardRow, fallback: number): number {
  return row.max_tasks_in_flight === null ? fallback : Number(row.max_tasks_in_flight);
}

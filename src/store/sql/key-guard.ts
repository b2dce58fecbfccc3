import type { Int } from '../rows.js';

/**
 * What a create's transaction reads of its key, under the key row's lock (migration 16): its
 * active tasks, its own in-flight limit and whether it has a budget now (HOT_PATHS.guardKeys, and
 * PostgreSQL's guarded batch insert, sql/hot-paths.ts). Read in the insert's transaction rather than
 * from a process's key cache, so a limit or budget set by another process binds the very next
 * create, and two creates of one key in two processes read one after the other.
 */
export interface KeyGuardRow {
  id: string;
  active_tasks: Int;
  max_tasks_in_flight: Int | null;
  budgeted: Int;
}

/** The columns a guard reads of a key row (`api_keys`). */
export const KEY_GUARD_COLUMNS = `id, active_tasks, max_tasks_in_flight, CASE WHEN budget IS NULL THEN 0 ELSE 1 END AS budgeted`;

/**
 * A condition the whole batch must pass to be inserted (PostgreSQL's guarded batch,
 * sql/tasks-insert.ts batchWith): CTEs written after the batch's rows `n`, and the WHERE of the
 * INSERT's SELECT.
 */
export interface BatchGuard {
  readonly ctes: string;
  readonly where: string;
}

/**
 * The key guard for a PostgreSQL batch, all or nothing: its keys locked in id order (the order of the
 * charge trigger, migration 9, and of the insert's own trigger), and no key refusing with all of
 * its tasks in the batch counted. A batch refused goes through the full guard instead
 * (postgres-store.ts), which decides task by task.
 */
export const KEY_GUARD_BATCH: BatchGuard = {
  ctes: `guard_keys AS (SELECT k.id, k.active_tasks, k.max_tasks_in_flight, k.budget FROM api_keys AS k
                       WHERE k.id IN (SELECT owner FROM n) ORDER BY k.id FOR UPDATE),
      guard_refused AS (SELECT 1 FROM (SELECT owner, count(*) AS tasks FROM n GROUP BY owner) AS b JOIN guard_keys AS k ON k.id = b.owner
                         WHERE (k.budget IS NOT NULL AND @reserves::int = 1)
                            OR (@inFlight::bigint IS NOT NULL AND COALESCE(k.max_tasks_in_flight, @inFlight) > 0
                                AND k.active_tasks + b.tasks > COALESCE(k.max_tasks_in_flight, @inFlight)))`,
  where: `NOT EXISTS (SELECT 1 FROM guard_refused)`,
};

/** The in-flight limit a guarded row sets: the key's own, else the process default; 0 means none. */
export function inFlightLimitOf(row: KeyGuardRow, fallback: number): number {
  return row.max_tasks_in_flight === null ? fallback : Number(row.max_tasks_in_flight);
}

import { dialectOperation, type DialectTexts } from '../dialect.js';
import type { ClaimedRow, Int } from '../rows.js';
import { CLAIMED_COLUMNS, columns } from '../rows.js';
import { claimSet, pickAndClaim, runnable } from './claim.js';
import { KEY_GUARD_BATCH, KEY_GUARD_COLUMNS, type KeyGuardRow } from './key-guard.js';
import { INSERT, NEW_ROW_VALUES, batchCtes, batchWith, ownerNextRank, queueFront, type InsertTaskParams, type InsertTasksParams } from './tasks-insert.js';
import { WAITING } from './upstream.js';
import { spentNow } from './usage.js';

/**
 * The store's hot paths, one row per operation with the SQLite and the PostgreSQL text next to
 * each other, so that changing an operation is two adjacent edits and a difference between the
 * databases is seen where it is made (the list of such differences: dialect.ts). These run on
 * every create, claim and upstream submission; the runners (sqlite-store.ts, postgres-store.ts)
 * call them by row. A dialect a row leaves out has no form of it, and its comment says why.
 * Shared skeletons (the claim's SET, a new task's values) are fragments of sql/claim.ts and
 * sql/tasks-insert.ts; what is written here is what differs.
 */

/** A row whose text is the same in both dialects. */
function same(text: string): DialectTexts {
  return { sqlite: text, postgres: text };
}

interface ClaimParams {
  owner: string;
  now: number;
  leaseUntil: number;
  limit: number;
}

interface ClaimQueuedParams extends ClaimParams {
  /** API key ids whose tasks this claim skips (the worker holds enough of theirs). */
  skipKeys: readonly string[];
}

/** What PostgreSQL's guarded batch insert adds to its rows (KEY_GUARD_BATCH). */
export interface BatchGuardParams {
  /** 1: the tasks reserve their maximum cost if their key has a budget. */
  reserves: 0 | 1;
  /** The in-flight limit guarded when the key has none of its own (0: none); null: not guarded. */
  inFlight: number | null;
}

/** A key and a channel of a batch, and the rank its first new task there takes. */
export interface BatchRankRow {
  owner: string;
  channel: string;
  base: Int;
}

const TAKEOVER_PICK = `status = 'processing' AND lease_expires_at < @now`;
const TAKEOVER_RECHECK = `t.status = 'processing' AND t.lease_expires_at < @now`;
const QUEUED_RECHECK = `t.status = 'queued' AND t.channel = 'sandbox'`;
const QUEUED_ORDER = 'fair_rank, created_at, id';

export const HOT_PATHS = {
  /*
   * A create's key guard (migration 16): its active tasks, its own in-flight limit and whether
   * it has a budget now, read under the key row's lock rather than from a process's key cache,
   * so a limit or budget set by another process binds the very next create.
   * SQLite: one writer at a time, and the insert's transaction begins with the write lock
   * (BEGIN IMMEDIATE, sqlite-store.ts), so the figures cannot change before its commit.
   * PostgreSQL: the batch's keys locked in id order (the order of the charge trigger, migration 9).
   */
  guardKeys: dialectOperation<{ ids: readonly string[] }, KeyGuardRow>('guard-keys', {
    sqlite: `SELECT ${KEY_GUARD_COLUMNS} FROM api_keys WHERE id IN (SELECT value FROM json_each(@ids))`,
    postgres: `SELECT ${KEY_GUARD_COLUMNS}
       FROM api_keys WHERE id = ANY(@ids::text[]) ORDER BY id FOR UPDATE`,
  }),

  /*
   * PostgreSQL: the group commit's batch, inserted only when no key of it needs more than the
   * statement itself reads (KEY_GUARD_BATCH: no budget to reserve against, no in-flight limit
   * reached), all or nothing, its keys locked in id order; a batch refused takes the full
   * guard's transaction (postgres-store.ts), which decides task by task. One statement instead
   * of four round trips. SQLite has no such form: it reads the guard (guardKeys) once per batch
   * and decides each task in the runner, as cheap as a statement's WHERE on one connection.
   */
  insertTasksGuarded: dialectOperation<InsertTasksParams & BatchGuardParams, { id: string }>('insert-tasks-guarded', {
    postgres: `WITH ${batchWith(KEY_GUARD_BATCH)} SELECT id FROM inserted`,
  }),

  /*
   * A batch's new tasks of one key, counted into `active_tasks` once after its rows (SQLite):
   * the per-row trigger of migration 16 cost one UPDATE of the key row per task (~2.5 µs of a
   * ~20 µs insert). Migration 17 dropped that trigger on SQLite, so the insert's transaction
   * counts (sqlite-store.ts, insertAll), and the guards of the same batch add what it counted
   * so far. PostgreSQL's trigger is already one per statement (one per batch).
   */
  countInserted: dialectOperation<{ owner: string; count: number }>('count-inserted', {
    sqlite: `UPDATE api_keys SET active_tasks = active_tasks + @count WHERE id = @owner`,
  }),

  /*
   * The rank a batch's first new task of each key and channel takes (fair order, migration 7):
   * one more than the key's highest active rank there, and at least the channel queue's front,
   * both as they were before the batch, as PostgreSQL's batch statement reads them (rankedRows);
   * the key's next tasks of the batch follow on (sqlite-store.ts). Once per pair and batch:
   * these two reads in every row's INSERT were a tenth of a create's insert.
   * `@pairs`: the batch's [key, channel] pairs, as JSON.
   */
  batchRanks: dialectOperation<{ pairs: readonly (readonly [string, string])[] }, BatchRankRow>('batch-ranks', {
    sqlite: `SELECT p.owner, p.channel,
                    max(COALESCE(${ownerNextRank('p.owner', 'p.channel')}, 0), COALESCE(${queueFront('p.channel')}, 0)) AS base
               FROM (SELECT value ->> 0 AS owner, value ->> 1 AS channel FROM json_each(@pairs)) AS p`,
  }),

  /*
   * The rows themselves. SQLite: the one-row form here, which the runner repeats for a batch's
   * rows in one statement (sqlite-store.ts, insertRows): one statement's overhead a batch, not a
   * row. PostgreSQL: the group commit's tasks in one statement over `unnest` (one round trip,
   * one commit).
   */
  insertRows: dialectOperation<InsertTaskParams>('insert-rows', {
    sqlite: `${INSERT} VALUES (${NEW_ROW_VALUES})`,
  }),
  insertTasks: dialectOperation<InsertTasksParams, { id: string }>('insert-tasks', {
    postgres: `WITH ${batchCtes} SELECT id FROM inserted`,
  }),

  /*
   * Reserves `amount` against the key's budget, guarded: 0 rows when spent (this period) +
   * reserved + amount would exceed the budget (reaching it exactly is allowed). Run in the
   * insert's transaction; on PostgreSQL the UPDATE holds the key's row until it commits, so
   * concurrent creates of one key, in any process, reserve one after the other. The period's
   * start is computed per dialect (usage-sql.ts).
   */
  reserveBudget: dialectOperation<{ id: string; amount: number; now: number }>('reserve-budget', {
    sqlite: `UPDATE api_keys SET reserved = reserved + @amount
       WHERE id = @id AND (budget IS NULL OR ${spentNow('sqlite')} + reserved + @amount <= budget)`,
    postgres: `UPDATE api_keys SET reserved = reserved + @amount
       WHERE id = @id AND (budget IS NULL OR ${spentNow('postgres')} + reserved + @amount <= budget)`,
  }),

  /*
   * Reserves a new task's input bytes for its owner, in the insert's transaction: 0 rows changed
   * means they do not fit under `limit` (0: no limit). The row holds the owner's total from then
   * until the commit, so creates of one key reserve one after the other in every process.
   * `limit` is cast where PostgreSQL first meets it: it would type it from `<= 0` as a 32-bit
   * integer, and a limit of 2 GiB or more would fail every create with a data URL; SQLite's
   * INTEGER is 64-bit.
   */
  reserveInputBytes: dialectOperation<{ owner: string; bytes: number; limit: number }>('reserve-input-bytes', {
    sqlite: `INSERT INTO key_inputs (owner, bytes)
       SELECT CAST(@owner AS TEXT), CAST(@bytes AS INTEGER) WHERE CAST(@limit AS INTEGER) <= 0 OR @bytes <= @limit
  ON CONFLICT (owner) DO UPDATE SET bytes = key_inputs.bytes + excluded.bytes
       WHERE @limit <= 0 OR key_inputs.bytes + excluded.bytes <= @limit`,
    postgres: `INSERT INTO key_inputs (owner, bytes)
       SELECT CAST(@owner AS TEXT), CAST(@bytes AS BIGINT) WHERE CAST(@limit AS BIGINT) <= 0 OR @bytes <= @limit
  ON CONFLICT (owner) DO UPDATE SET bytes = key_inputs.bytes + excluded.bytes
       WHERE @limit <= 0 OR key_inputs.bytes + excluded.bytes <= @limit`,
  }),

  /*
   * Polling claims (claimTasks): expired leases first (their tasks are the oldest), then queued
   * tasks in fair order (fair_rank, migration 7: the keys with work take turns), then creation
   * order, skipping the keys the worker holds enough tasks of (worker-pool.ts).
   * PostgreSQL claimers run concurrently: the picked rows are locked with SKIP LOCKED (two
   * claimers never pick the same row, neither waits). SQLite runs one writer at a time: the
   * same statement without it is already atomic.
   */
  claimTakeovers: dialectOperation<ClaimParams, ClaimedRow>('claim-takeovers', {
    sqlite: pickAndClaim(TAKEOVER_PICK, 'lease_expires_at', '', TAKEOVER_RECHECK),
    postgres: pickAndClaim(TAKEOVER_PICK, 'lease_expires_at', 'FOR UPDATE SKIP LOCKED', TAKEOVER_RECHECK),
  }),
  claimQueued: dialectOperation<ClaimQueuedParams, ClaimedRow>('claim-queued', {
    sqlite: pickAndClaim(
      `status = 'queued' AND channel = 'sandbox' AND owner NOT IN (SELECT value FROM json_each(@skipKeys))`,
      QUEUED_ORDER,
      '',
      QUEUED_RECHECK,
    ),
    postgres: pickAndClaim(
      `status = 'queued' AND channel = 'sandbox' AND owner <> ALL (@skipKeys::text[])`,
      QUEUED_ORDER,
      'FOR UPDATE SKIP LOCKED',
      QUEUED_RECHECK,
    ),
  }),

  /*
   * One named task (a queue job names it). Two claimers of one row: PostgreSQL re-checks the
   * WHERE on the row the winner committed (READ COMMITTED), SQLite runs one writer at a time;
   * either way the loser matches 0 rows. PostgreSQL's group commit claims a batch of them in
   * one statement (claimByIds), each row keeping its own guard.
   */
  claimById: dialectOperation<{ id: string; owner: string; now: number; leaseUntil: number }, ClaimedRow>(
    'claim-by-id',
    same(`UPDATE tasks AS t
         SET ${claimSet('@owner', '@now', '@leaseUntil')}
       WHERE t.id = @id AND ${runnable('@now')}
   RETURNING ${columns(CLAIMED_COLUMNS)}`),
  ),
  claimByIds: dialectOperation<{ ids: string[]; owners: string[]; nows: number[]; leaseUntils: number[] }, ClaimedRow>('claim-by-ids', {
    postgres: `UPDATE tasks AS t
         SET ${claimSet('c.owner', 'c.now', 'c.lease_until')}
        FROM unnest(@ids::text[], @owners::text[], @nows::bigint[], @leaseUntils::bigint[]) AS c(id, owner, now, lease_until)
       WHERE t.id = c.id AND ${runnable('c.now')}
   RETURNING ${columns(CLAIMED_COLUMNS, 't')}`,
  }),

  /*
   * slotFree, before every upstream submission (slot-share.ts decides from what these read).
   * The keys holding slots of a channel and how many each: one row per key that ever held a
   * slot of the channel, so the cost follows the number of keys, never the tasks in flight.
   */
  channelHolders: dialectOperation<{ channel: string }, { owner: string; held: Int }>(
    'channel-holders',
    same(`SELECT s.owner, s.held FROM channel_slots AS s WHERE s.channel = @channel AND s.held > 0`),
  ),
  /*
   * The keys with a task waiting for a channel (queued, not yet submitted), in owner order, at
   * most `cap` of them: a skip scan of the partial index `tasks_channel_waiting` (migration 13),
   * one index seek per key, so a key's backlog of 10,000 queued tasks costs one seek, not 10,000
   * rows. The fair share needs no more than max_in_flight + 1 of them (slot-share.ts).
   */
  channelWaitingKeys: dialectOperation<{ channel: string; cap: number }, { owner: string }>(
    'channel-waiting-keys',
    same(`WITH RECURSIVE waiting (owner, n) AS (
        SELECT (SELECT t.owner FROM tasks AS t WHERE ${WAITING} AND t.channel = @channel ORDER BY t.owner LIMIT 1), 1
        UNION ALL
        SELECT (SELECT t.owner FROM tasks AS t WHERE ${WAITING} AND t.channel = @channel AND t.owner > w.owner ORDER BY t.owner LIMIT 1), w.n + 1
          FROM waiting AS w WHERE w.owner IS NOT NULL AND w.n < @cap)
      SELECT owner FROM waiting WHERE owner IS NOT NULL`),
  ),
  /*
   * Holds the channel's `submit` row until the transaction ends, so in-flight checks of one
   * channel run one at a time (PostgreSQL). SQLite needs none: one writer, and the check and the
   * write run to the end without anything in between (sqlite-store.ts, markSubmitting).
   */
  lockChannelSubmit: dialectOperation<{ channel: string }, { channel: string }>('lock-channel-submit', {
    postgres: `SELECT channel FROM channel_limits WHERE channel = @channel AND bucket = 'submit' FOR UPDATE`,
  }),
};

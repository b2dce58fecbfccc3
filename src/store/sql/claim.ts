import { operation, skipLocked, type Dialect } from '../dialect.js';
import { CLAIMED_COLUMNS, columns, type ClaimedRow } from '../rows.js';

/**
 * queued -> processing (or an expired lease taken over). Written once, used by every claim:
 * the next attempt, a lease for the worker, started_at and progress kept if set. The SET reads
 * the row as it was (`t.status` is the old status): a claim that takes over an expired lease
 * counts the attempt it ends as interrupted. `owner`, `now` and `leaseUntil` are SQL
 * expressions: placeholders in the one-row form, columns of the batch in the batch form.
 */
function claimSet(owner: string, now: string, leaseUntil: string): string {
  return `status = 'processing',
             attempt = t.attempt + 1,
             version = t.version + 1,
             lease_owner = ${owner},
             lease_expires_at = ${leaseUntil},
             started_at = COALESCE(t.started_at, ${now}),
             progress = COALESCE(t.progress, 0),
             interruptions = t.interruptions + CASE WHEN t.status = 'processing' THEN 1 ELSE 0 END`;
}

/**
 * A task a claim may take: a render (channel 'sandbox'; upstream tasks belong to the upstream
 * scheduler), queued, or processing with an expired lease.
 */
function runnable(now: string): string {
  return `(t.channel = 'sandbox' AND (t.status = 'queued' OR (t.status = 'processing' AND t.lease_expires_at < ${now})))`;
}

interface ClaimParams {
  owner: string;
  now: number;
  leaseUntil: number;
  limit: number;
}

interface ClaimQueuedParams extends ClaimParams {
  /** JSON array of API key ids whose tasks this claim skips (the worker holds enough of theirs). */
  skipKeys: string;
}

/** The task's key is not one of the JSON array `param`. */
function keyNotIn(dialect: Dialect, param: string): string {
  return dialect === 'postgres'
    ? `owner <> ALL (ARRAY(SELECT json_array_elements_text(${param}::json)))`
    : `owner NOT IN (SELECT value FROM json_each(${param}))`;
}

/*
 * Polling claims (claimTasks): expired leases first (their tasks are the oldest), then queued
 * tasks in fair order (fair_rank, migration 7: the keys with work take turns), then creation
 * order, skipping the keys the worker holds enough tasks of (worker-pool.ts). The rows are picked in a CTE, which PostgreSQL runs once: a
 * LIMIT ... SKIP LOCKED subquery inside the UPDATE's WHERE may be run again per row and pick
 * more than `limit`. The WHERE repeats the pick's condition: a row another claimer changed
 * after the pick no longer matches.
 */
export const claimTakeovers = operation<ClaimParams, ClaimedRow>(
  'claim-takeovers',
  (dialect) => `WITH picked AS (SELECT id FROM tasks WHERE status = 'processing' AND lease_expires_at < @now
                       ORDER BY lease_expires_at LIMIT @limit ${skipLocked(dialect)})
      UPDATE tasks AS t
         SET ${claimSet('@owner', '@now', '@leaseUntil')}
       WHERE t.id IN (SELECT id FROM picked) AND t.status = 'processing' AND t.lease_expires_at < @now
   RETURNING ${columns(CLAIMED_COLUMNS)}`,
);

export const claimQueued = operation<ClaimQueuedParams, ClaimedRow>(
  'claim-queued',
  (dialect) => `WITH picked AS (SELECT id FROM tasks WHERE status = 'queued' AND channel = 'sandbox' AND ${keyNotIn(dialect, '@skipKeys')}
                       ORDER BY fair_rank, created_at, id LIMIT @limit ${skipLocked(dialect)})
      UPDATE tasks AS t
         SET ${claimSet('@owner', '@now', '@leaseUntil')}
       WHERE t.id IN (SELECT id FROM picked) AND t.status = 'queued' AND t.channel = 'sandbox'
   RETURNING ${columns(CLAIMED_COLUMNS)}`,
);

/**
 * One named task (a queue job names it). Two claimers of one row: PostgreSQL re-checks the
 * WHERE on the row the winner committed (READ COMMITTED), SQLite runs one writer at a time;
 * either way the loser matches 0 rows.
 */
export const claimById = operation<{ id: string; owner: string; now: number; leaseUntil: number }, ClaimedRow>(
  'claim-by-id',
  () => `UPDATE tasks AS t
         SET ${claimSet('@owner', '@now', '@leaseUntil')}
       WHERE t.id = @id AND ${runnable('@now')}
   RETURNING ${columns(CLAIMED_COLUMNS)}`,
);

/** The batch form of claimById (PostgreSQL's group commit): each row keeps its own guard. */
export const claimByIds = operation<{ ids: string[]; owners: string[]; nows: number[]; leaseUntils: number[] }, ClaimedRow>(
  'claim-by-ids',
  () => `UPDATE tasks AS t
         SET ${claimSet('c.owner', 'c.now', 'c.lease_until')}
        FROM unnest(@ids::text[], @owners::text[], @nows::bigint[], @leaseUntils::bigint[]) AS c(id, owner, now, lease_until)
       WHERE t.id = c.id AND ${runnable('c.now')}
   RETURNING ${columns(CLAIMED_COLUMNS, 't')}`,
  ['postgres'],
);

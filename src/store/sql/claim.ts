import { CLAIMED_COLUMNS, columns } from '../rows.js';

/*
 * The fragments every claim is built from; the claims themselves are rows of sql/hot-paths.ts,
 * each dialect's text next to the other's.
 */

/**
 * queued -> processing (or an expired lease taken over). Written once, used by every claim:
 * the next attempt, a lease for the worker, started_at and progress kept if set. The SET reads
 * the row as it was (`t.status` is the old status): a claim that takes over an expired lease
 * counts the attempt it ends as interrupted. `owner`, `now` and `leaseUntil` are SQL
 * expressions: placeholders in the one-row form, columns of the batch in the batch form.
 */
export function claimSet(owner: string, now: string, leaseUntil: string): string {
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
export function runnable(now: string): string {
  return `(t.channel = 'sandbox' AND (t.status = 'queued' OR (t.status = 'processing' AND t.lease_expires_at < ${now})))`;
}

/**
 * Picks rows (`pick`, a condition on tasks; `order`, their order; `lock`, the dialect's row lock)
 * in a CTE, which PostgreSQL runs once: a LIMIT ... SKIP LOCKED subquery inside the UPDATE's
 * WHERE may be run again per row and pick more than `limit`. The WHERE repeats the pick's
 * `recheck`: a row another claimer changed after the pick no longer matches.
 */
export function pickAndClaim(pick: string, order: string, lock: string, recheck: string): string {
  return `WITH picked AS (SELECT id FROM tasks WHERE ${pick}
                       ORDER BY ${order} LIMIT @limit ${lock})
      UPDATE tasks AS t
         SET ${claimSet('@owner', '@now', '@leaseUntil')}
       WHERE t.id IN (SELECT id FROM picked) AND ${recheck}
   RETURNING ${columns(CLAIMED_COLUMNS)}`;
}

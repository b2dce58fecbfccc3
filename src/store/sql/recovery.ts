import { fetchesInputs } from './tasks-insert.js';
import { operation } from '../dialect.js';
import { NO_USAGE } from './settle.js';
import type { JobQueueSql } from '../dialect.js';

/**
 * processing (lease expired, `maxAttempts` attempts lost to stopped workers) -> failed. The
 * attempt whose lease expired is lost too, hence `interruptions + 1`.
 */
export const failAbandoned = operation<{ now: number; maxAttempts: number; error: string }, { id: string }>(
  'fail-abandoned',
  () => `UPDATE tasks AS t SET status = 'failed', completed_at = @now, error = @error, lease_owner = NULL, lease_expires_at = NULL, version = t.version + 1,
             ${NO_USAGE}
       WHERE t.status = 'processing' AND t.lease_expires_at < @now AND t.interruptions + 1 >= @maxAttempts
   RETURNING id`,
);

/** Ends a dead owner's leases now (`expiredAt` is in the past), so its tasks are taken over. */
export const expireLeases = operation<{ owner: string; expiredAt: number }>(
  'expire-leases',
  () => `UPDATE tasks SET lease_expires_at = @expiredAt WHERE status = 'processing' AND lease_owner = @owner`,
);

/** One reaper at a time across all processes: a transaction-scoped advisory lock. */
export const REAPER_LOCK = 727012;

/**
 * With a job queue (PostgreSQL): a new job for each runnable task that no live job will deliver,
 * oldest first, at most `limit`; one statement, so atomic. The lock CTE is joined, so it is
 * taken before any row is read; a process that does not get it finds nothing this pass.
 */
export const requeueStranded = (jobs: JobQueueSql) =>
  operation<{ now: number; staleMs: number; limit: number }, { id: string }>(
    'requeue-stranded',
    () => `WITH reaper AS (SELECT pg_try_advisory_xact_lock(${REAPER_LOCK}) AS locked),
           stranded AS (
             SELECT t.id, t.created_at, t.owner, 0 AS priority, ${fetchesInputs('t.params')} AS fetches_inputs FROM tasks t, reaper
              WHERE reaper.locked AND t.channel = 'sandbox'
                AND (t.status = 'queued' OR (t.status = 'processing' AND t.lease_expires_at < @now))
                AND NOT ${jobs.liveJob('t')}
              ORDER BY t.created_at
              LIMIT @limit),
           jobs AS (SELECT 1 FROM ${jobs.addJobs('stranded')})
      SELECT s.id, (SELECT count(*) FROM jobs) AS added FROM stranded s`,
    ['postgres'],
  );

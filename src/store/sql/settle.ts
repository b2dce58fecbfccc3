import { fetchesInputs } from './tasks-insert.js';
import { operation } from '../dialect.js';
import type { JobQueueSql } from '../dialect.js';

/**
 * The attempt fence, written once: every transition a worker makes names the attempt it owns,
 * and 0 changed rows means it lost (its lease was taken over, or the task settled).
 */
function fence(id: string, attempt: string): string {
  return `t.id = ${id} AND t.status = 'processing' AND t.attempt = ${attempt}`;
}

/**
 * processing -> completed, with what the task delivered and cost (the charge trigger of
 * migration 9 books it in the same transaction). A settled task keeps `lease_owner`: the worker
 * that settled it.
 */
function completeSet(now: string, outputs: string, seconds: string, images: string, cost: string): string {
  return `status = 'completed', progress = 100, version = t.version + 1, completed_at = ${now}, outputs = ${outputs}, lease_expires_at = NULL,
          usage_seconds = ${seconds}, usage_images = ${images}, cost = ${cost}`;
}

/** A failed or cancelled task delivered nothing and costs nothing. */
export const NO_USAGE = `usage_seconds = 0, usage_images = 0, cost = 0`;

/** What a completion's statement binds for its usage. */
export interface UsageParams {
  seconds: number;
  images: number;
  cost: number;
}

interface Fenced {
  id: string;
  attempt: number;
}

export const heartbeat = operation<Fenced & { leaseUntil: number }>(
  'heartbeat',
  () => `UPDATE tasks AS t SET lease_expires_at = @leaseUntil WHERE ${fence('@id', '@attempt')}`,
);

/** Progress only rises. */
export const setProgress = operation<Fenced & { progress: number }>(
  'set-progress',
  () =>
    `UPDATE tasks AS t SET progress = @progress, version = t.version + 1 WHERE ${fence('@id', '@attempt')} AND (t.progress IS NULL OR t.progress < @progress)`,
);

export const complete = operation<Fenced & UsageParams & { now: number; outputs: string }>(
  'complete',
  () => `UPDATE tasks AS t SET ${completeSet('@now', '@outputs', '@seconds', '@images', '@cost')} WHERE ${fence('@id', '@attempt')}`,
  ['sqlite'],
);

/** The batch form of complete (PostgreSQL's group commit); the rows it returns are the winners. */
export const completeMany = operation<
  { ids: string[]; attempts: number[]; outputs: string[]; nows: number[]; seconds: number[]; images: number[]; costs: number[] },
  { id: string; attempt: number }
>(
  'complete-many',
  () => `UPDATE tasks AS t SET ${completeSet('c.now', 'c.outputs', 'c.seconds', 'c.images', 'c.cost')}
        FROM unnest(@ids::text[], @attempts::int[], @outputs::text[], @nows::bigint[], @seconds::int[], @images::int[], @costs::bigint[])
             AS c(id, attempt, outputs, now, seconds, images, cost)
       WHERE ${fence('c.id', 'c.attempt')}
   RETURNING t.id, t.attempt`,
  ['postgres'],
);

/** processing -> failed. */
export const fail = operation<Fenced & { now: number; error: string }>(
  'fail',
  () =>
    `UPDATE tasks AS t SET status = 'failed', completed_at = @now, error = @error, lease_expires_at = NULL, version = t.version + 1, ${NO_USAGE}
      WHERE ${fence('@id', '@attempt')}`,
);

/** processing -> queued: a worker hands back a task it cannot finish (graceful shutdown). */
const releaseSource = `UPDATE tasks AS t SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, version = t.version + 1 WHERE ${fence('@id', '@attempt')}`;

export const release = operation<Fenced>('release', () => releaseSource);

/**
 * The same with the task's new job, in one statement (so atomic). The jobs CTE is read, so
 * PostgreSQL runs it; it adds nothing when the release lost.
 */
export const releaseWithJob = (jobs: JobQueueSql) =>
  operation<Fenced, { n: string }>(
    'release-with-job',
    () => `WITH released AS (${releaseSource} RETURNING t.id, t.created_at, t.owner, 0 AS priority, ${fetchesInputs('t.params')} AS fetches_inputs),
           jobs AS (SELECT 1 FROM ${jobs.addJobs('released')})
      SELECT (SELECT count(*) FROM released) AS n, (SELECT count(*) FROM jobs) AS added`,
    ['postgres'],
  );

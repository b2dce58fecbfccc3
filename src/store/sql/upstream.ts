import { fetchesInputs } from './tasks-insert.js';
import { operation, skipLocked } from '../dialect.js';
import type { JobQueueSql } from '../dialect.js';
import type { Int, PendingCancelRow, UpstreamCancelRow, UpstreamRow, UpstreamSaveParams } from '../rows.js';
import { NO_USAGE, type UsageParams } from './settle.js';

/**
 * The upstream lifecycle's statements (docs/channels.md "The lifecycle"). A task whose channel
 * is not 'sandbox' is driven by the upstream scheduler: `next_check_at` is both its timer (when
 * to submit or poll next) and its lease (a step in progress pushes it past its own deadline).
 * Every step claims the task first, which increments `attempt`; each later write of that step
 * is fenced by the attempt, so a process that lost the task (its lease ran out) changes nothing.
 */

export const UPSTREAM_COLUMNS = `id, kind, model, owner, status, progress, created_at, started_at, params, attempt, channel, target,
  upstream_id, upstream_state, upstream_request_id, upstream_since, check_interval_ms`;

const ACTIVE = `t.channel <> 'sandbox' AND t.status IN ('queued', 'processing')`;

/** Waiting for a slot of its channel: the predicate of the partial index `tasks_channel_waiting` (migration 13), as written there. */
export const WAITING = `t.channel <> 'sandbox' AND t.status = 'queued' AND t.upstream_state IS NULL`;

/**
 * Due upstream tasks, each leased until `leaseUntil`; the rows are as they were (the step reads
 * `upstream_state`). Among due tasks, fair order between keys first (fair_rank, migration 7):
 * a key that floods a channel does not hold back the other keys' submissions and polls.
 */
export const claimUpstreamDue = operation<{ now: number; leaseUntil: number; limit: number }, UpstreamRow>(
  'claim-upstream-due',
  (dialect) => `WITH picked AS (SELECT id FROM tasks AS t WHERE ${ACTIVE} AND t.next_check_at <= @now
                       ORDER BY t.fair_rank, t.next_check_at LIMIT @limit ${skipLocked(dialect)})
      UPDATE tasks AS t SET attempt = t.attempt + 1, next_check_at = @leaseUntil
       WHERE t.id IN (SELECT id FROM picked) AND ${ACTIVE} AND t.next_check_at <= @now
   RETURNING ${UPSTREAM_COLUMNS}`,
);

/** The earliest next_check_at of an active upstream task: when the scheduler wakes next. */
export const nextUpstreamDue = operation<Record<string, never>, { due: Int | null }>(
  'next-upstream-due',
  () => `SELECT min(t.next_check_at) AS due FROM tasks AS t WHERE ${ACTIVE}`,
);

/**
 * A channel's slots (max_in_flight) are held by its active tasks submitted or being submitted
 * (`upstream_state` set). `channel_slots` (migration 13) holds their number per (channel, key),
 * kept by a trigger in every transition's own transaction (migrations.ts, `holdsSlot`), so
 * neither the gauge nor the check before a submission counts tasks.
 */

/** Tasks a channel holds upstream (the in-flight gauge): the sum of its keys' counters. */
export const countUpstreamInFlight = operation<{ channel: string }, { n: Int }>(
  'count-upstream-in-flight',
  () => `SELECT COALESCE(sum(s.held), 0) AS n FROM channel_slots AS s WHERE s.channel = @channel`,
);

/** One non-final step's outcome, fenced by the attempt the step claimed. */
const saveSource = `UPDATE tasks AS t
         SET status = @status, channel = @channel, target = @target, upstream_state = @upstreamState,
             upstream_id = @upstreamId, upstream_request_id = @requestId, upstream_since = @since,
             next_check_at = @nextCheckAt, check_interval_ms = @intervalMs, progress = @progress, started_at = @startedAt, version = t.version + 1
       WHERE t.id = @id AND t.attempt = @attempt AND ${ACTIVE}`;

export const saveUpstream = operation<UpstreamSaveParams>('save-upstream', () => saveSource);

/** The same, and a render job when the step failed over to the sandbox (PostgreSQL's queue). */
export const saveUpstreamWithJob = (jobs: JobQueueSql) =>
  operation<UpstreamSaveParams, { n: Int }>(
    'save-upstream-with-job',
    () => `WITH saved AS (${saveSource} RETURNING t.id, t.created_at, t.channel, t.owner, ${fetchesInputs('t.params')} AS fetches_inputs),
           renders AS (SELECT id, created_at, owner, 0 AS priority, fetches_inputs FROM saved WHERE channel = 'sandbox'),
           jobs AS (SELECT 1 FROM ${jobs.addJobs('renders')})
      SELECT (SELECT count(*) FROM saved) AS n, (SELECT count(*) FROM jobs) AS added`,
    ['postgres'],
  );

/** Completed, with the usage measured from the copied outputs and what the upstream reported of its own (JSON, or NULL). */
export const completeUpstream = operation<
  UsageParams & { id: string; attempt: number; now: number; outputs: string; startedAt: number; upstreamUsage: string | null }
>(
  'complete-upstream',
  () => `UPDATE tasks AS t SET status = 'completed', progress = 100, completed_at = @now, outputs = @outputs,
             started_at = COALESCE(t.started_at, @startedAt), upstream_state = NULL, next_check_at = NULL,
             version = t.version + 1, usage_seconds = @seconds, usage_images = @images, cost = @cost, upstream_usage = @upstreamUsage
       WHERE t.id = @id AND t.attempt = @attempt AND ${ACTIVE}`,
);

export const failUpstream = operation<{ id: string; attempt: number; now: number; error: string }>(
  'fail-upstream',
  () => `UPDATE tasks AS t SET status = 'failed', completed_at = @now, error = @error, upstream_state = NULL, next_check_at = NULL,
             version = t.version + 1, ${NO_USAGE}
       WHERE t.id = @id AND t.attempt = @attempt AND ${ACTIVE}`,
);

/**
 * Takes the upstream cancel of a cancelled task, once: the cancel (cancel.ts) leaves
 * `upstream_state` as it was, and whoever clears it here sends the upstream cancel, so the
 * process that won the cancel and a scheduler step that lost its fence to it never both do.
 * No version bump: nothing a client sees changes.
 */
export const takeUpstreamCancel = operation<{ id: string }, UpstreamCancelRow>(
  'take-upstream-cancel',
  () => `UPDATE tasks AS t SET upstream_state = NULL, next_check_at = NULL
       WHERE t.id = @id AND t.status = 'cancelled' AND t.upstream_state IS NOT NULL AND t.upstream_state <> 'cancelling'
   RETURNING id, model, channel, target, upstream_id, upstream_request_id`,
);

/**
 * A final task whose upstream job still needs its cancel: one the winner could not take (it
 * had no channels loaded), or one whose cancel got no answer and waits for its retry
 * (`upstream_state = 'cancelling'`, next try at `next_check_at`). Migration 12 indexes them.
 */
const PENDING_CANCEL = `t.upstream_state IS NOT NULL AND t.status IN ('cancelled', 'failed')`;

/** Due pending cancels, leased until `leaseUntil`; `cancelling` marks them taken, so takeUpstreamCancel leaves them. */
export const claimUpstreamCancels = operation<{ now: number; leaseUntil: number; limit: number }, PendingCancelRow>(
  'claim-upstream-cancels',
  (dialect) => `WITH picked AS (SELECT id FROM tasks AS t WHERE ${PENDING_CANCEL} AND t.next_check_at <= @now
                       ORDER BY t.next_check_at LIMIT @limit ${skipLocked(dialect)})
      UPDATE tasks AS t SET upstream_state = 'cancelling', next_check_at = @leaseUntil
       WHERE t.id IN (SELECT id FROM picked) AND ${PENDING_CANCEL} AND t.next_check_at <= @now
   RETURNING id, model, channel, target, upstream_id, upstream_request_id, completed_at, check_interval_ms`,
);

/** A cancel the upstream did not answer: tried again at `at` (the job's ids kept with it). */
export const deferUpstreamCancel = operation<{
  id: string;
  channel: string;
  target: number;
  upstreamId: string;
  requestId: string | null;
  at: number;
  intervalMs: number;
}>(
  'defer-upstream-cancel',
  () => `UPDATE tasks AS t SET upstream_state = 'cancelling', channel = @channel, target = @target, upstream_id = @upstreamId,
             upstream_request_id = @requestId, next_check_at = @at, check_interval_ms = @intervalMs
       WHERE t.id = @id AND t.status IN ('cancelled', 'failed') AND (t.upstream_state IS NULL OR t.upstream_state = 'cancelling')`,
);

/** The upstream answered the cancel (or it is given up): nothing pending any more. */
export const finishUpstreamCancel = operation<{ id: string }>(
  'finish-upstream-cancel',
  () => `UPDATE tasks AS t SET upstream_state = NULL, next_check_at = NULL
       WHERE t.id = @id AND t.upstream_state = 'cancelling' AND t.status IN ('cancelled', 'failed')`,
);

/** The pacing row of a channel's bucket ('submit' | 'poll'), created once. */
export const ensureChannelLimit = operation<{ channel: string; bucket: string }>(
  'ensure-channel-limit',
  () => `INSERT INTO channel_limits (channel, bucket, next_free_at) VALUES (@channel, @bucket, 0) ON CONFLICT (channel, bucket) DO NOTHING`,
);

/**
 * Books the bucket's next free slot, `spacingMs` after the previous one, in one UPDATE under the
 * row's lock: processes sharing the database leave at the channel's rate together. Returns when
 * the booked slot starts.
 */
export const reserveChannelSlot = operation<{ channel: string; bucket: string; now: number; spacingMs: number }, { at: Int }>(
  'reserve-channel-slot',
  () => `UPDATE channel_limits
         SET next_free_at = CASE WHEN next_free_at > @now THEN next_free_at ELSE @now END + @spacingMs
       WHERE channel = @channel AND bucket = @bucket
   RETURNING next_free_at - @spacingMs AS at`,
);

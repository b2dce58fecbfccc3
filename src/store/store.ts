import type { ClaimedTask, InsertOutcome, NewTask, SubmitLimits, TaskError, TaskOutput, TaskUsage, UpstreamStep } from './records.js';
import type { KeyOperations, MetaOperations, TaskOperations, UsageOperations, WebhookOperations } from './operations.js';

export type { JobQueueSql } from './dialect.js';
export type {
  ApiKeyRecord,
  BudgetPeriod,
  KeyAuthRecord,
  KeyPatch,
  KeyRole,
  KeySettings,
  NewKey,
  ClaimedDelivery,
  NewWebhookDelivery,
  WebhookAttemptRecord,
  WebhookAttemptResult,
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
  WebhookEndpointRecord,
} from './records.js';

/**
 * Persistence of tasks, split by what its callers need: the task service and the task sources
 * use a TaskStore, authentication a KeyStore, start-up a MetaStore. The store persists; it does
 * not decide: every state change is requested by TaskService as a named transition, and every
 * transition is a guarded UPDATE (`WHERE status = ... AND attempt = ...`) whose affected-row
 * count tells the caller whether it won. Two workers racing on one task: exactly one settle
 * changes a row. The SQL of every operation is in `sql/`, written once (dialect.ts).
 *
 * Most methods are rows of the operation table (operations.ts), which declares them with their
 * statement and result and from which these interfaces take them; the methods listed here are
 * the ones whose execution differs between the databases (each runner writes its own).
 */
export interface TaskStore extends TaskOperations, UsageOperations {
  /**
   * Inserts a queued task, and in the same transaction reserves `task.reserve` against its
   * key's budget (guarded: `budget_exceeded` when it does not fit), reserves its input bytes for
   * its owner (guarded: `inputs_over_limit` when they do not fit under `inputLimit`) and takes its
   * idempotency key (if any: `key_taken` when a live row holds it). Nothing is inserted,
   * reserved or taken unless all of it is.
   */
  insertTask(task: NewTask): Promise<InsertOutcome>;
  /**
   * queued -> processing (or expired leases taken over): up to `limit` runnable tasks, expired
   * leases first, then queued ones in fair order between keys (fair_rank, then creation),
   * except those of `skipKeys` (API key ids), each with its attempt incremented and a lease for
   * `workerId` until `leaseUntil`.
   */
  claimTasks(workerId: string, now: number, leaseUntil: number, limit: number, skipKeys?: readonly string[]): Promise<ClaimedTask[]>;
  /**
   * The same transition for one named task (a queue job names it): claims it only if it is
   * queued, or processing with an expired lease. A duplicate or late job gets undefined.
   */
  claimTaskById(id: string, workerId: string, now: number, leaseUntil: number): Promise<ClaimedTask | undefined>;
  /** processing -> completed, with the task's usage (the charge trigger books it in the same transaction). */
  complete(id: string, attempt: number, outputs: readonly TaskOutput[], now: number, usage: TaskUsage): Promise<boolean>;
  /** processing -> failed. */
  fail(id: string, attempt: number, error: TaskError, now: number): Promise<boolean>;
  /**
   * processing -> queued: a worker hands back a task it cannot finish (graceful shutdown). With
   * a job queue, the task's new job is added in the same statement.
   */
  release(id: string, attempt: number): Promise<boolean>;
  /**
   * With a job queue: adds jobs for runnable tasks that no live job will deliver (processing
   * with an expired lease, or queued while their job is gone or held longer than `staleMs` by a
   * worker that never claimed it). Returns their ids; always empty without a job queue, where
   * workers find runnable tasks by polling the table.
   */
  requeueStranded(now: number, staleMs: number): Promise<string[]>;
  /** A step's outcome, fenced by the attempt; a failover to the sandbox gets its render job. */
  saveUpstream(id: string, attempt: number, step: UpstreamStep): Promise<boolean>;
  /**
   * The step's `submitting` write, only while the channel holds fewer than `maxInFlight` tasks
   * upstream and the task's key may take the free slot (slot-share.ts: its fair share while
   * other keys wait); checked and written under the channel's `submit` row lock (PostgreSQL), so
   * processes sharing the database keep the bound together. The check reads the channel's slot
   * counters (migration 13), not its tasks. 'full': no slot for this key now; 'lost': the fence.
   */
  markSubmitting(id: string, attempt: number, step: UpstreamStep, limits: SubmitLimits): Promise<'marked' | 'full' | 'lost'>;
  /**
   * The same check, alone and unlocked: whether a task of `limits.owner` could take a slot of the
   * channel now. Read before a submission books its `submit_per_s` slot, so that a task with no
   * slot to take does not spend the channel's rate (markSubmitting still decides).
   */
  hasSlot(channel: string, limits: SubmitLimits): Promise<boolean>;
}

/** API keys, by hash (auth/ depends on this alone). */
export type KeyStore = KeyOperations;

/** Settings the service keeps across restarts (the URL signing secret). */
export type MetaStore = MetaOperations;

/** Webhook endpoints, the delivery outbox and its attempts (sql/webhooks.ts). */
export type WebhookStore = WebhookOperations;

/** Budgets and usage reports (migration 9; sql/usage.ts). */
export type UsageStore = UsageOperations;

/** The whole store, as a backend opens it: its parts on one database. */
export interface Store extends TaskStore, KeyStore, MetaStore, WebhookStore, UsageStore {
  readonly dialect: 'sqlite' | 'postgres';
  migrate(): Promise<number[]>;
  close(): Promise<void>;
}

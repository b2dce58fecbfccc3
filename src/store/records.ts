import type { TaskFailureCode } from '../failure-codes.js';
import type { ModelKind, ResolvedParams } from '../catalog/index.js';

/**
 * Glossary
 * - task: one accepted creation request; it ends in exactly one final state.
 * - attempt: how many times a worker has started the task; every settle is fenced by it, so a
 *   worker whose lease was taken over changes nothing (its UPDATE matches 0 rows).
 * - lease: a worker owns a processing task until `leaseExpiresAt`; heartbeats extend it, and an
 *   expired lease lets another worker take the task over.
 * - owner: the id of the API key that created the task; a task is visible only to it.
 */

export type TaskStatus = 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';

export interface TaskError {
  readonly type: 'generation_error';
  readonly code: TaskFailureCode;
  readonly message: string;
  readonly param: string;
}

export interface TaskOutput {
  readonly type: 'video' | 'image';
  /** Storage key of the file; URLs are signed from it when the task is read. */
  readonly key: string;
  readonly contentType: string;
}

export interface Task {
  readonly id: string;
  readonly kind: ModelKind;
  readonly model: string;
  readonly owner: string;
  readonly status: TaskStatus;
  readonly progress: number | null;
  /** Milliseconds since the Unix epoch; the API shows whole seconds. */
  readonly createdAt: number;
  readonly startedAt: number | null;
  readonly completedAt: number | null;
  readonly error: TaskError | null;
  readonly outputs: readonly TaskOutput[];
  readonly attempt: number;
  /** Bumped by every transition (migration 4): orders a task's events across processes. */
  readonly version: number;
  /** What the task delivered and cost (migration 9); null until it is final. */
  readonly usage: TaskUsage | null;
}

/**
 * A final task's usage: billed seconds of video (the delivered file's duration, to the nearest
 * second, at least 1), delivered images, and its cost in micro-units of the pricing currency
 * (0 for failed and cancelled tasks).
 */
export interface TaskUsage {
  readonly seconds: number;
  readonly images: number;
  readonly cost: number;
}

/** What a completion writes with the outputs: the task's usage, and what an upstream reported of its own (JSON text). */
export interface CompletionUsage extends TaskUsage {
  readonly upstreamUsage?: string | undefined;
}

/** A task as a worker sees it after claiming it: with its parameters and lease. */
export interface ClaimedTask extends Task {
  readonly params: ResolvedParams;
  readonly leaseOwner: string;
}

export interface NewTask {
  readonly id: string;
  readonly kind: ModelKind;
  readonly model: string;
  readonly owner: string;
  readonly params: ResolvedParams;
  readonly createdAt: number;
  /** Created under an Idempotency-Key: the key is taken in the same transaction as the insert. */
  readonly idempotency?: IdempotencyClaim;
  /** The route's first target: 'sandbox' (the default) renders here; any other channel goes upstream. */
  readonly channel?: string;
  /**
   * The task's maximum cost in micro-units, reserved against the owner's budget in the insert's
   * transaction when the key has a budget then (read under the key row's lock; a key without
   * one reserves nothing): the guarded reservation refuses the insert when it does not fit.
   */
  readonly reserve?: number;
  /**
   * Present: the insert's transaction guards the owner's queued and processing tasks under its
   * key row's lock (migration 16): the key's own `max_tasks_in_flight`, else this default (0:
   * none). Absent (store-level inserts): no guard.
   */
  readonly inFlightLimit?: number;
  /**
   * Bytes of the task's stored inputs (decoded data URLs), reserved for its owner in the
   * insert's transaction and given back when the task ends (migration 10); default 0.
   */
  readonly inputBytes?: number;
  /** The owner's limit on those bytes over its queued and processing tasks; 0 or absent: none. */
  readonly inputLimit?: number;
  /** The trace context of the create (a W3C traceparent), kept for the task's later spans (tracing/). */
  readonly traceContext?: string;
}

/**
 * What an insert did: the task is stored; a live row held its idempotency key; its reservation
 * did not fit the key's budget; its input bytes did not fit under its owner's limit; the key has
 * its limit of tasks queued or processing. A refusal
 * stores nothing.
 */
export type InsertOutcome = 'inserted' | 'key_taken' | 'budget_exceeded' | 'inputs_over_limit' | 'tasks_over_limit';

export interface IdempotencyClaim {
  readonly key: string;
  /** sha256 of the canonical request; a replay must match it. */
  readonly requestHash: string;
  /** A key row created before this (ms) has expired and is replaced. */
  readonly expiredBefore: number;
}

/** A key's row, as a later request with the same key reads it. */
export interface IdempotencyRecord {
  readonly kind: string;
  readonly requestHash: string;
  readonly taskId: string;
  readonly createdAt: number;
}

/** A page request of the list operation (TaskStore.listTasks). */
export interface TaskListQuery {
  readonly owner: string;
  readonly kind: ModelKind;
  readonly status?: TaskStatus;
  readonly model?: string;
  /** The page starts right after this id (newest first). */
  readonly after?: string;
  readonly limit: number;
}

/** Where an upstream task stands: NULL before submission, `submitting` while a submit may be in flight. */
export type UpstreamState = 'submitting' | 'accepted' | 'copying';

/** An upstream task as the scheduler claimed it (the row as it was before the claim). */
export interface UpstreamTask {
  readonly id: string;
  readonly kind: ModelKind;
  readonly model: string;
  readonly owner: string;
  readonly status: 'queued' | 'processing';
  readonly progress: number | null;
  readonly createdAt: number;
  readonly startedAt: number | null;
  readonly params: ResolvedParams;
  /** The fence: this step's writes name it. */
  readonly attempt: number;
  readonly channel: string;
  /** Index of `channel` in the route's targets. */
  readonly target: number;
  readonly upstreamId: string | null;
  readonly upstreamState: UpstreamState | null;
  readonly requestId: string | null;
  /** When the current upstream state began: the submission was sent, then accepted. */
  readonly since: number | null;
  readonly intervalMs: number | null;
}

/** The state a non-final upstream step leaves the task in (every column named, none implied). */
/** The bounds a submission is checked against: the channel's max_in_flight, and the key's share of it while others wait. */
export interface SubmitLimits {
  readonly maxInFlight: number;
  /** The key the task belongs to. */
  readonly owner: string;
  /** max_in_flight_per_key; null for the fair share (store/slot-share.ts). */
  readonly perKey: number | null;
}

export interface UpstreamStep {
  readonly status: 'queued' | 'processing';
  readonly channel: string;
  readonly target: number;
  readonly upstreamState: UpstreamState | null;
  readonly upstreamId: string | null;
  readonly requestId: string | null;
  /** When the current upstream state began: the submission was sent, then accepted. */
  readonly since: number | null;
  /** null only when the task failed over to the sandbox (a render). */
  readonly nextCheckAt: number | null;
  readonly intervalMs: number | null;
  readonly progress: number | null;
  readonly startedAt: number | null;
}

/** A cancelled task's upstream job: what the upstream cancel needs (no job when `upstreamId` is null). */
export interface UpstreamCancelRef {
  readonly id: string;
  readonly model: string;
  readonly channel: string;
  /** Index of `channel` in the route's targets. */
  readonly target: number;
  readonly upstreamId: string | null;
  readonly requestId: string | null;
}

/** A key's budget and what it holds now (migration 9): `spent` in the current period. */
export interface KeyBudgetState {
  /** Micro-units; null for no budget. */
  readonly budget: number | null;
  /** UTC calendar periods; null for a lifetime budget (or none). */
  readonly period: 'day' | 'month' | null;
  readonly reserved: number;
  readonly spent: number;
}

/** A usage report's selection: whole UTC days [startDay, endDay), one key or every key. */
export interface UsageQuery {
  /** One key's rows; undefined for every key (the operator's report). */
  readonly key?: string;
  /** 'YYYY-MM-DD', inclusive. */
  readonly startDay: string;
  /** 'YYYY-MM-DD', exclusive. */
  readonly endDay: string;
  readonly byKey: boolean;
  readonly byModel: boolean;
  readonly byDay: boolean;
}

/** The spend export's range: 'YYYY-MM-DD', start inclusive, end exclusive. */
export interface UsageExportQuery {
  readonly startDay: string;
  readonly endDay: string;
}

/** Where a page of the export starts: after this row. */
export interface UsageExportCursor {
  readonly day: string;
  readonly keyId: string;
  readonly model: string;
}

/** One row of the spend export: a key's usage of a model on a UTC day. */
export interface UsageExportRecord extends UsageExportCursor {
  /** The key's name; '' when the key is no longer in the table. */
  readonly keyName: string;
  readonly tasks: number;
  readonly seconds: number;
  readonly images: number;
  readonly cost: number;
}

/** One row of a report; a dimension not grouped by is ''. */
export interface UsageRecord {
  readonly keyId: string;
  readonly model: string;
  readonly day: string;
  readonly tasks: number;
  readonly seconds: number;
  readonly images: number;
  readonly cost: number;
}

/** A cancel still owed to the upstream (claimed for a retry), with when the task ended and the last retry interval. */
export interface PendingUpstreamCancel extends UpstreamCancelRef {
  readonly completedAt: number | null;
  readonly intervalMs: number | null;
}

/** What a key may do: `client` keys the task API, `admin` keys only /v1/admin/* (docs/admin.md). */
export type KeyRole = 'client' | 'admin';

export type BudgetPeriod = 'day' | 'month';

/** What an operator sets on a key. Amounts are micro-units. */
export interface KeySettings {
  readonly name: string;
  /** null: no budget. */
  readonly budget: number | null;
  /** UTC calendar periods; null: a lifetime budget. */
  readonly budgetPeriod: BudgetPeriod | null;
  /** Model ids and prefixes ending in `*`; null: every model. */
  readonly models: readonly string[] | null;
  /** null: the process-wide default. */
  readonly rateLimitPerMin: number | null;
  /** null: the process-wide default. */
  readonly maxTasksInFlight: number | null;
}

/** A change of settings: only the fields present change. */
export type KeyPatch = Partial<KeySettings> & { readonly disabled?: boolean };

export interface NewKey extends Partial<KeySettings> {
  readonly id: string;
  readonly hash: string;
  readonly name: string;
  readonly createdAt: number;
  /** Default `client`. */
  readonly role?: KeyRole;
}

export interface ApiKeyRecord extends KeySettings {
  readonly id: string;
  readonly role: KeyRole;
  readonly createdAt: number;
  readonly revokedAt: number | null;
  readonly disabled: boolean;
  /** Micro-units held by the key's queued and processing tasks. */
  readonly reserved: number;
  /** Micro-units its tasks final in the current budget period cost (all time for a lifetime budget). */
  readonly spent: number;
}

/** What the auth lookup returns: the settings every request of the key obeys. */
export interface KeyAuthRecord {
  readonly id: string;
  readonly revoked: boolean;
  readonly role: KeyRole;
  readonly disabled: boolean;
  readonly models: readonly string[] | null;
  readonly rateLimitPerMin: number | null;
  readonly maxTasksInFlight: number | null;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** A webhook endpoint of one API key (decisions 8.5). */
export interface WebhookEndpointRecord {
  readonly id: string;
  readonly owner: string;
  readonly url: string;
  readonly events: readonly string[];
  /** `whsec_...`; stored as given, since signing needs it. */
  readonly secret: string;
  readonly createdAt: number;
}

/** One event for one endpoint: the outbox row (its id is the `webhook-id` of every attempt). */
export interface WebhookDeliveryRecord {
  readonly id: string;
  readonly endpointId: string;
  readonly type: string;
  readonly taskId: string;
  readonly status: WebhookDeliveryStatus;
  /** Attempts started (a claim counts one: an attempt lost to a crash counts too). */
  readonly attempts: number;
  /** When pending: when it is due (or, while an attempt runs, when that attempt's lease ends). */
  readonly nextAttemptAt: number | null;
  /** An attempt holds it now (or held it when its process died, until the lease ends). */
  readonly leased: boolean;
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface ClaimedDelivery extends WebhookDeliveryRecord {
  /** The body, frozen when the task became final. */
  readonly payload: string;
}

export interface WebhookAttemptRecord {
  readonly deliveryId: string;
  readonly attempt: number;
  readonly at: number;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
}

export interface NewWebhookDelivery {
  readonly id: string;
  readonly endpointId: string;
  readonly owner: string;
  readonly type: string;
  readonly taskId: string;
  readonly payload: string;
}

/** The outcome of one attempt, written by the holder of that attempt only. */
export interface WebhookAttemptResult {
  readonly id: string;
  readonly endpointId: string;
  /** The lease owner that claimed it. */
  readonly owner: string;
  /** The delivery's `attempts` as the claim returned it (the fence). */
  readonly attempts: number;
  readonly status: WebhookDeliveryStatus;
  readonly nextAttemptAt: number | null;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly at: number;
  readonly durationMs: number;
  readonly now: number;
}

import type {
  ClaimedTask,
  IdempotencyRecord,
  NewTask,
  Task,
  TaskError,
  TaskListQuery,
  TaskOutput,
  UpstreamCancelRef,
  PendingUpstreamCancel,
  UpstreamStep,
  UpstreamTask,
} from './records.js';

/**
 * Persistence of tasks, split by what its callers need: the task service and the task sources
 * use a TaskStore, authentication a KeyStore, start-up a MetaStore. The store persists; it does
 * not decide: every state change is requested by TaskService as a named transition, and every
 * transition is a guarded UPDATE (`WHERE status = ... AND attempt = ...`) whose affected-row
 * count tells the caller whether it won. Two workers racing on one task: exactly one settle
 * changes a row. The SQL of every operation is in `sql/`, written once (dialect.ts).
 */
export interface TaskStore {
  /**
   * Inserts a queued task, and takes its idempotency key (if any) in the same transaction:
   * false when a live row holds the key, and then nothing is inserted.
   */
  insertTask(task: NewTask): Promise<boolean>;
  /** queued | processing -> cancelled (attempt + 1 fences the worker); undefined when not cancellable or not found. */
  cancelTask(id: string, owner: string, now: number): Promise<Task | undefined>;
  /** A page of an owner's tasks of one family, newest first. */
  listTasks(query: TaskListQuery): Promise<Task[]>;
  findIdempotencyKey(owner: string, key: string): Promise<IdempotencyRecord | undefined>;
  /** Deletes up to `limit` keys created before `expiredBefore`; the number deleted. */
  sweepIdempotencyKeys(expiredBefore: number, limit: number): Promise<number>;
  /** A task as its owner sees it; undefined for unknown ids and for other owners' tasks. */
  getTask(id: string, owner: string): Promise<Task | undefined>;
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
  /** Extends a lease; false when the worker no longer owns the attempt. */
  heartbeat(id: string, attempt: number, leaseUntil: number): Promise<boolean>;
  /** Raises progress (never lowers it); false when the attempt is no longer current. */
  setProgress(id: string, attempt: number, progress: number): Promise<boolean>;
  /** processing -> completed. */
  complete(id: string, attempt: number, outputs: readonly TaskOutput[], now: number): Promise<boolean>;
  /** processing -> failed. */
  fail(id: string, attempt: number, error: TaskError, now: number): Promise<boolean>;
  /**
   * processing -> queued: a worker hands back a task it cannot finish (graceful shutdown). With
   * a job queue, the task's new job is added in the same statement.
   */
  release(id: string, attempt: number): Promise<boolean>;
  /**
   * processing (lease expired, `maxAttempts` attempts lost to stopped workers) -> failed: a task
   * whose workers keep dying still ends in a final state. Returns the ids failed.
   */
  failAbandoned(now: number, maxAttempts: number, error: TaskError): Promise<string[]>;
  /** Distinct lease owners of processing tasks (crash recovery looks for dead ones). */
  leaseOwners(): Promise<string[]>;
  /** Ends the leases of a dead owner now, so its tasks are taken over without waiting. */
  expireLeases(owner: string, now: number): Promise<number>;
  /**
   * With a job queue: adds jobs for runnable tasks that no live job will deliver (processing
   * with an expired lease, or queued while their job is gone or held longer than `staleMs` by a
   * worker that never claimed it). Returns their ids; always empty without a job queue, where
   * workers find runnable tasks by polling the table.
   */
  requeueStranded(now: number, staleMs: number): Promise<string[]>;
  /** Counts by status, for metrics and health. */
  countByStatus(): Promise<Record<string, number>>;
  /** An owner's queued and processing tasks (the per-key tasks-in-flight limit reads it, cached). */
  countActiveTasks(owner: string): Promise<number>;
  // Retention and stored inputs (sql/retention.ts).
  /** The params (JSON) of an owner's queued and processing tasks that reference stored inputs. */
  activeInputParams(owner: string): Promise<string[]>;
  /**
   * Deletes up to `limit` final tasks completed before `before`, oldest first; returns the
   * deleted ones with their outputs, whose files the caller deletes.
   */
  deleteExpiredTasks(before: number, limit: number): Promise<{ id: string; outputs: TaskOutput[] }[]>;
  /** A task's status whoever owns it; undefined when there is no such task. */
  taskStatus(id: string): Promise<string | undefined>;
  // The upstream lifecycle (sql/upstream.ts).
  /** Due upstream tasks (next_check_at <= now), leased until `leaseUntil` with the attempt incremented. */
  claimUpstreamDue(now: number, leaseUntil: number, limit: number): Promise<UpstreamTask[]>;
  /** When the next active upstream task is due; undefined when none is active. */
  nextUpstreamDue(): Promise<number | undefined>;
  countUpstreamInFlight(channel: string): Promise<number>;
  /** A step's outcome, fenced by the attempt; a failover to the sandbox gets its render job. */
  saveUpstream(id: string, attempt: number, step: UpstreamStep): Promise<boolean>;
  completeUpstream(id: string, attempt: number, outputs: readonly TaskOutput[], now: number, startedAt: number): Promise<boolean>;
  failUpstream(id: string, attempt: number, error: TaskError, now: number): Promise<boolean>;
  /** A cancelled task's upstream job, taken once (sql/upstream.ts takeUpstreamCancel); undefined when already taken or never submitted. */
  takeUpstreamCancel(id: string): Promise<UpstreamCancelRef | undefined>;
  /** Final tasks whose upstream cancel is still owed and due (sql/upstream.ts claimUpstreamCancels), leased until `leaseUntil`. */
  claimUpstreamCancels(now: number, leaseUntil: number, limit: number): Promise<PendingUpstreamCancel[]>;
  /** A cancel the upstream did not answer: kept, to be tried again at `at`. */
  deferUpstreamCancel(ref: UpstreamCancelRef & { readonly upstreamId: string }, at: number, intervalMs: number): Promise<boolean>;
  /** The owed cancel is done (answered, or given up). */
  finishUpstreamCancel(id: string): Promise<boolean>;
  /**
   * The step's `submitting` write, only while the channel holds fewer than `maxInFlight` tasks
   * upstream; counted and written under the channel's `submit` row lock (PostgreSQL), so
   * processes sharing the database keep the bound together. False: full, or the fence lost.
   */
  markSubmitting(id: string, attempt: number, step: UpstreamStep, maxInFlight: number): Promise<'marked' | 'full' | 'lost'>;
  /** Books the next request slot of a channel's bucket, across processes; resolves with when it starts (ms). */
  reserveChannelSlot(channel: string, bucket: 'submit' | 'poll', now: number, spacingMs: number): Promise<number>;
}

export interface ApiKeyRecord {
  readonly id: string;
  readonly name: string;
  readonly createdAt: number;
  readonly revokedAt: number | null;
}

/** API keys, by hash (auth/ depends on this alone). */
export interface KeyStore {
  findKeyByHash(hash: string): Promise<{ id: string; revoked: boolean } | undefined>;
  insertKey(key: { id: string; hash: string; name: string; createdAt: number }): Promise<boolean>;
  countKeys(): Promise<number>;
  listKeys(): Promise<ApiKeyRecord[]>;
  revokeKey(id: string, now: number): Promise<boolean>;
  /**
   * Keys named `env` mirror MEDIAGATE_API_KEYS: those in `hashes` are (re)activated, the others
   * revoked, so removing a key from the environment stops it working at the next start.
   */
  syncEnvKeys(hashes: readonly string[], now: number): Promise<void>;
}

/** Settings the service keeps across restarts (the URL signing secret). */
export interface MetaStore {
  getMeta(key: string): Promise<string | undefined>;
  /** Sets a value only if none is set; returns the value that is stored afterwards. */
  initMeta(key: string, value: string): Promise<string>;
  /** Rows whose key matches a LIKE pattern, read in one statement. */
  listMeta(pattern: string): Promise<Array<{ key: string; value: string }>>;
  /**
   * Replaces `key`'s value with `value` only if it is still `expected`, and then, in the same
   * transaction, sets each of `also` (insert or replace). False, with nothing written, when the
   * value was no longer `expected`. Used to rotate the URL signing secret (storage/signing.ts).
   */
  swapMeta(key: string, expected: string, value: string, also: ReadonlyArray<{ key: string; value: string }>): Promise<boolean>;
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

/** Webhook endpoints, the delivery outbox and its attempts (sql/webhooks.ts). */
export interface WebhookStore {
  insertWebhookEndpoint(endpoint: WebhookEndpointRecord): Promise<void>;
  listWebhookEndpoints(owner: string): Promise<WebhookEndpointRecord[]>;
  countWebhookEndpoints(owner: string): Promise<number>;
  /** `owner` undefined: any owner's (the dispatcher's read). */
  getWebhookEndpoint(id: string, owner: string | undefined): Promise<WebhookEndpointRecord | undefined>;
  /** Deletes the endpoint with its deliveries and attempts; false when it is not the owner's. */
  deleteWebhookEndpoint(id: string, owner: string): Promise<boolean>;
  /**
   * In one transaction: up to `limit` final tasks not yet announced, `plan` turns each (with its
   * owner's endpoints) into deliveries, which are inserted, and the tasks are marked announced.
   * On PostgreSQL the tasks are locked with SKIP LOCKED, so processes share the work. `plan` is
   * synchronous (SQLite runs the transaction as one synchronous function). Returns the counts.
   */
  announceTasks(
    limit: number,
    now: number,
    plan: (task: Task, endpoints: readonly WebhookEndpointRecord[]) => NewWebhookDelivery[],
  ): Promise<{ tasks: number; deliveries: number }>;
  /** Due deliveries leased to `owner` until `leaseUntil`, with `attempts` incremented. */
  claimWebhookDeliveries(owner: string, now: number, leaseUntil: number, limit: number): Promise<ClaimedDelivery[]>;
  nextWebhookDue(): Promise<number | undefined>;
  /** Records the attempt and the delivery's new state; false (nothing written) when the fence is lost. */
  settleWebhookDelivery(result: WebhookAttemptResult): Promise<boolean>;
  dropWebhookDelivery(id: string): Promise<void>;
  /** Due now with the same id; false when not found or an attempt holds it. */
  redeliverWebhook(id: string, endpointId: string, now: number): Promise<boolean>;
  getWebhookDelivery(id: string, endpointId: string): Promise<WebhookDeliveryRecord | undefined>;
  /** A page of an endpoint's deliveries, newest first, each with its attempts (oldest first). */
  listWebhookDeliveries(
    endpointId: string,
    after: string | undefined,
    limit: number,
  ): Promise<{ delivery: WebhookDeliveryRecord; attempts: WebhookAttemptRecord[] }[]>;
}

/** The whole store, as a backend opens it: its parts on one database. */
export interface Store extends TaskStore, KeyStore, MetaStore, WebhookStore {
  readonly dialect: 'sqlite' | 'postgres';
  migrate(): Promise<number[]>;
  close(): Promise<void>;
}

/**
 * A job queue that shares the store's PostgreSQL database, as the store's SQL sees it: SQL text
 * fragments that the store's statements embed, so that a job is added in the same statement as
 * the task change it announces. Jobs only carry task ids; task state stays in `tasks`.
 */
export interface JobQueueSql {
  /**
   * A set-returning SQL expression that adds one job per row of `relation` (the name of a CTE
   * with `id`, `created_at`, `owner`, `priority` and `fetches_inputs`, such as the tasks an INSERT
   * returned): `priority` orders jobs before their creation time (lower first: fair order
   * between keys), `owner` lets a worker process skip the jobs of a key it holds enough of, and
   * `fetches_inputs` says the task has inputs to fetch before its render (worker-pool.ts).
   */
  addJobs(relation: string): string;
  /**
   * A condition on the task aliased `task`: a live job will deliver it (see
   * TaskStore.requeueStranded); it may use the parameter `@staleMs`.
   */
  liveJob(task: string): string;
}

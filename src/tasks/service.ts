import { EventEmitter } from 'node:events';
import { findModel, type ModelRow, type ResolvedParams } from '../catalog/index.js';
import { maxTaskCost, priceOf, requestedQuantities, resolutionOf, taskCost, type Metered, type Pricing } from '../billing/index.js';
import type { TaskFailureCode } from '../failure-codes.js';
import { hasDataUrlValues, type InputStore } from '../storage/inputs.js';
import { newTaskId } from './ids.js';
import { currentTraceparent, inTaskSpan, traceActive, type TaskSpanAttributes } from '../tracing/index.js';
import type { TaskStore } from '../store/store.js';
import type { TaskParamsPage, TaskWithParams } from '../store/operations.js';
import type {
  ClaimedTask,
  InsertOutcome,
  NewTask,
  Task,
  TaskError,
  TaskListQuery,
  TaskOutput,
  TaskUsage,
  UpstreamCancelRef,
  PendingUpstreamCancel,
  UpstreamStep,
  UpstreamTask,
} from '../store/records.js';

/** The charge's span: the task's amounts (the settle's trigger books them in the same transaction). */
function chargeAttributes(task: { id: string; model: string; owner: string }, usage: TaskUsage): TaskSpanAttributes {
  return {
    taskId: task.id,
    model: task.model,
    keyId: task.owner,
    extra: { 'mediagate.cost_micro': usage.cost, 'mediagate.billed_seconds': usage.seconds, 'mediagate.billed_images': usage.images },
  };
}

/** A task that reached a final state in this process, with what its metrics need. */
export interface SettledTask {
  readonly id: string;
  readonly status: 'completed' | 'failed';
  /** Absent for a task failed by the sweep of abandoned tasks (only its id is known). */
  readonly model?: string;
  readonly code?: TaskFailureCode;
  /** Milliseconds from creation to the (first) start, and from the start to the end. */
  readonly queuedMs?: number;
  readonly renderMs?: number;
  /** What a completed task delivered and cost (micro-units). */
  readonly usage?: TaskUsage;
}

/**
 * A create refused because the task's maximum cost does not fit the key's budget (nothing was
 * stored, no idempotency key taken); the HTTP layer answers 402 `budget_exceeded`.
 */
export class BudgetExceeded extends Error {
  override readonly name = 'BudgetExceeded';
  constructor(readonly maxCost: number) {
    super(`the task's maximum cost (${maxCost} micro-units) does not fit the key's budget`);
  }
}

export interface TaskServiceEvents {
  created: [task: Task];
  settled: [task: SettledTask];
  /** A transition took effect (after its commit): the task's row changed. tasks/feed.ts re-reads it. */
  changed: [task: { id: string }];
  /**
   * A cancel won, in this process (after its commit). The worker pool aborts the render if it
   * runs here; an upstream lifecycle can cancel the upstream job. Other processes learn it from
   * their fenced heartbeat or settle (0 rows).
   */
  cancelled: [task: Task];
}

/** decisions §8: a key is remembered for 24 hours after first use. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** Expired keys deleted per sweep; a sweep runs at most once a minute. */
const KEY_SWEEP_BATCH = 1000;
const KEY_SWEEP_INTERVAL_MS = 60_000;

/** An idempotent create's request: the key and the hash of the canonical request. */
export interface IdempotentRequest {
  readonly key: string;
  readonly requestHash: string;
}

/** What an idempotent create did: made the task, found the key's task (replay), or found the key used for another request. */
export type IdempotentOutcome =
  { readonly outcome: 'created'; readonly task: Task } | { readonly outcome: 'replayed'; readonly task: Task } | { readonly outcome: 'reused' };

/** What a cancel found: `won` when this call cancelled it; otherwise the task as it is. */
export interface CancelOutcome {
  readonly task: Task;
  readonly won: boolean;
}

function timings(task: ClaimedTask, now: number): { queuedMs?: number; renderMs?: number } {
  return task.startedAt === null ? {} : { queuedMs: task.startedAt - task.createdAt, renderMs: now - task.startedAt };
}

export interface TaskServiceOptions {
  readonly store: TaskStore;
  readonly now?: () => number;
  /** The channel of a model's first route target (default: every model renders in the sandbox). */
  readonly channelOf?: (model: string) => string;
  /**
   * Where data-URL inputs are stored at creation (the row keeps references) and deleted when
   * the task ends. Absent: inputs stay in the row (store-level specs).
   */
  readonly inputs?: InputStore;
  /** MEDIAGATE_PRICING_FILE, read at start; absent: nothing is priced (usage still counts seconds and images). */
  readonly pricing?: Pricing;
  /** MEDIAGATE_KEY_INPUT_BYTES: stored input bytes a key's queued and processing tasks may hold; 0 (default): no limit. */
  readonly inputBytesPerKey?: number;
}

/**
 * A create refused because its stored inputs would take the key past its limit on stored input
 * bytes (nothing was stored, no idempotency key taken); the HTTP layer answers 429.
 */
export class InputsOverLimit extends Error {
  override readonly name = 'InputsOverLimit';
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`${bytes} more bytes of stored inputs would pass the key's limit of ${limit} bytes`);
  }
}

/**
 * A task's maximum cost, or, when prices that large times the request's quantities pass what
 * micro-units hold exactly (maxTaskCost throws), the largest exact amount: more than any budget
 * can be (a budgeted key is refused 402), and a key without a budget reserves nothing anyway.
 */
function boundedMaxCost(pricing: Pricing, row: ModelRow, params: ResolvedParams): number {
  try {
    return maxTaskCost(pricing, row, params);
  } catch (error) {
    if (error instanceof RangeError) return Number.MAX_SAFE_INTEGER;
    throw error;
  }
}

/**
 * A create refused because the key has its limit of tasks queued or processing, as the insert's
 * transaction read it under the key's row lock; the HTTP layer answers 429.
 */
export class TasksOverLimit extends Error {
  override readonly name = 'TasksOverLimit';
  constructor() {
    super('the key has its limit of tasks queued or processing');
  }
}

/** What the insert guards besides a budget: the process's default in-flight limit (0: none), which a key's own setting replaces. */
export interface CreateLimits {
  readonly inFlight?: number;
}

/**
 * The one writer of task state. Each method is a named transition of the lifecycle
 *   queued -> processing -> completed | failed,  processing -> queued (handed back),
 *   queued | processing -> cancelled (by the owner)
 * and returns whether it took effect: a worker that lost its lease gets `false` and must
 * throw its result away. Guarded by the store's `WHERE status = ... AND attempt = ...`.
 */
export class TaskService extends EventEmitter<TaskServiceEvents> {
  private readonly store: TaskStore;
  private readonly now: () => number;
  private readonly channelOf: (model: string) => string;
  private readonly inputs: InputStore | undefined;
  private readonly pricing: Pricing | undefined;
  private readonly inputBytesPerKey: number;

  constructor(options: TaskServiceOptions) {
    super();
    this.store = options.store;
    this.pricing = options.pricing;
    this.now = options.now ?? Date.now;
    this.channelOf = options.channelOf ?? (() => 'sandbox');
    this.inputs = options.inputs;
    this.inputBytesPerKey = options.inputBytesPerKey ?? 0;
    // Inputs are needed until the task is final; whichever process settles it deletes them
    // (tasks/retention.ts sweeps what a crash in between left).
    const dropInputs = ({ id }: { id: string }): void => void this.inputs?.discard(id).catch(() => {});
    this.on('settled', dropInputs);
    this.on('cancelled', dropInputs);
  }

  /**
   * Inserts a new task after storing its data-URL inputs, whose bytes the insert reserves for
   * the owner under the per-key limit; the inputs are deleted again when the insert does not
   * happen (a refusal or a throw). Throws InputsOverLimit, BudgetExceeded or TasksOverLimit
   * when the insert's transaction refused it.
   */
  private async insertWithInputs(
    task: Task,
    row: ModelRow,
    params: ResolvedParams,
    limits: CreateLimits,
    idempotency?: NewTask['idempotency'],
  ): Promise<InsertOutcome> {
    // The maximum cost goes with every priced create: the insert reserves it only if the key
    // has a budget at that moment (read under the key's row lock, not from a cache).
    const reserve = this.pricing === undefined ? undefined : boundedMaxCost(this.pricing, row, params);
    // Most creates have no data URL: no call into the input store, no promise turn.
    const stored = this.inputs !== undefined && hasDataUrlValues(params) ? await this.inputs.store(task.id, params) : { params, bytes: 0 };
    let outcome: InsertOutcome | undefined;
    try {
      // Set field by field rather than spread from conditional objects: one object per create.
      const insert: { -readonly [K in keyof NewTask]: NewTask[K] } = {
        id: task.id,
        kind: task.kind,
        model: task.model,
        owner: task.owner,
        params: stored.params,
        createdAt: task.createdAt,
        channel: this.channelOf(task.model),
      };
      if (idempotency !== undefined) insert.idempotency = idempotency;
      if (reserve !== undefined) insert.reserve = reserve;
      if (limits.inFlight !== undefined) insert.inFlightLimit = limits.inFlight;
      if (stored.bytes > 0) {
        insert.inputBytes = stored.bytes;
        insert.inputLimit = this.inputBytesPerKey;
      }
      const traceContext = currentTraceparent();
      if (traceContext !== undefined) insert.traceContext = traceContext;
      outcome = await this.store.insertTask(insert);
      if (outcome === 'budget_exceeded') throw new BudgetExceeded(reserve ?? 0);
      if (outcome === 'inputs_over_limit') throw new InputsOverLimit(stored.bytes, this.inputBytesPerKey);
      if (outcome === 'tasks_over_limit') throw new TasksOverLimit();
      return outcome;
    } finally {
      if (outcome !== 'inserted' && stored.params !== params) await this.inputs?.discard(task.id);
    }
  }

  /** (none) -> queued. The task is durable when this resolves. Throws BudgetExceeded when its maximum cost does not fit the key's budget. */
  async create(owner: string, row: ModelRow, params: ResolvedParams, limits: CreateLimits = {}): Promise<Task> {
    const task = this.newTask(owner, row);
    await this.insertWithInputs(task, row, params, limits);
    this.emit('created', task);
    return task;
  }

  /**
   * A completed task's usage: its billed seconds and images as measured from its files (or,
   * when they could not be measured, what it asked for), priced by the pricing file.
   */
  usageOf(model: string, params: ResolvedParams, metered: Metered | undefined): TaskUsage {
    const row = findModel(model);
    const measured = metered ?? (row === undefined ? { seconds: 0, images: 0 } : requestedQuantities(row, params));
    const resolution = row === undefined ? undefined : resolutionOf(row, params);
    const cost = taskCost(priceOf(this.pricing, model), { seconds: measured.seconds, images: measured.images, resolution });
    return { seconds: measured.seconds, images: measured.images, cost };
  }

  /**
   * The same under an idempotency key (decisions §8). A live key answers with its task
   * (same request) or `reused` (another request); otherwise `admit` runs (the caller's limits)
   * and the task is inserted with the key in one transaction, where the key's primary key
   * decides against a concurrent create with the same key in another process: the loser reads
   * the winner's row. Callers keep two same-key requests of one process apart (409).
   */
  async createOnce(
    owner: string,
    row: ModelRow,
    params: ResolvedParams,
    request: IdempotentRequest,
    admit: () => Promise<void>,
    limits: CreateLimits = {},
  ): Promise<IdempotentOutcome> {
    this.sweepKeysSometimes();
    let prior = await this.replay(owner, request);
    if (prior && prior.outcome !== 'orphaned') return prior;
    await admit();
    // A lost insert finds the winner's row; only a row that vanished in between loops again.
    for (let round = 0; round < 3; round += 1) {
      const task = this.newTask(owner, row);
      // A live key whose task retention deleted is free: the insert may take it over.
      const expiredBefore = Math.max(task.createdAt - IDEMPOTENCY_TTL_MS, prior?.outcome === 'orphaned' ? prior.createdAt + 1 : 0);
      if ((await this.insertWithInputs(task, row, params, limits, { ...request, expiredBefore })) === 'inserted') {
        this.emit('created', task);
        return { outcome: 'created', task };
      }
      prior = await this.replay(owner, request);
      if (prior && prior.outcome !== 'orphaned') return prior;
    }
    throw new Error(`idempotency key of ${owner} neither taken nor found`);
  }

  /**
   * A live key's answer, or undefined when the key is free (never used, or expired);
   * `orphaned` when its task was deleted (retention): the key is free again, whatever body.
   */
  private async replay(owner: string, request: IdempotentRequest): Promise<IdempotentOutcome | { outcome: 'orphaned'; createdAt: number } | undefined> {
    const record = await this.store.findIdempotencyKey(owner, request.key);
    if (!record || record.createdAt < this.now() - IDEMPOTENCY_TTL_MS) return undefined;
    const task = await this.store.getTask(record.taskId, owner);
    if (!task) return { outcome: 'orphaned', createdAt: record.createdAt };
    if (record.requestHash !== request.requestHash) return { outcome: 'reused' };
    return { outcome: 'replayed', task };
  }

  private lastKeySweep = Number.NEGATIVE_INFINITY;

  /** Deletes expired keys, at most once a minute, in the background of a keyed create. */
  private sweepKeysSometimes(): void {
    const now = this.now();
    if (now - this.lastKeySweep < KEY_SWEEP_INTERVAL_MS) return;
    this.lastKeySweep = now;
    this.sweepIdempotencyKeys().catch(() => {});
  }

  /** Deletes up to one batch of expired idempotency keys; the number deleted. */
  sweepIdempotencyKeys(): Promise<number> {
    return this.store.sweepIdempotencyKeys(this.now() - IDEMPOTENCY_TTL_MS, KEY_SWEEP_BATCH);
  }

  /**
   * queued | processing -> cancelled, by the owner; undefined for an unknown task. A cancel
   * that loses (the task is final) returns the task as it is, `won: false`.
   */
  async cancel(owner: string, id: string): Promise<CancelOutcome | undefined> {
    const cancelled = await this.store.cancelTask(id, owner, this.now());
    if (cancelled) {
      this.emit('changed', { id });
      this.emit('cancelled', cancelled);
      return { task: cancelled, won: true };
    }
    const task = await this.store.getTask(id, owner);
    return task && { task, won: false };
  }

  /**
   * Deletes up to `limit` final tasks completed more than `retentionMs` ago, with their stored
   * inputs (left by a crash); returns them with their outputs, whose files the caller deletes.
   */
  async deleteExpired(retentionMs: number, limit: number): Promise<{ id: string; outputs: TaskOutput[] }[]> {
    const deleted = await this.store.deleteExpiredTasks(this.now() - retentionMs, limit);
    for (const task of deleted) await this.inputs?.discard(task.id);
    return deleted;
  }

  /** Bytes of stored inputs an owner's queued and processing tasks hold: one row (migration 10), whatever the backlog. */
  activeInputBytes(owner: string): Promise<number> {
    return this.store.keyInputBytes(owner);
  }

  /**
   * Counts a copy of an input published for an upstream (ChannelMedia.publish) against the
   * task's owner, before the copy is written: the bytes join the task's stored input bytes and
   * are given back with them when the task ends, in that same transaction, so a crash at any
   * point leaves the count right once the task ends (a copy counted but never written, or
   * counted again by a retried submission, is only held until then). A copy is not refused for
   * the limit: its task was accepted already. False when the task has already ended.
   */
  countPublishedInput(taskId: string, bytes: number): Promise<boolean> {
    return this.store.addPublishedInputBytes(taskId, bytes);
  }

  /**
   * Deletes stored inputs of tasks that are final or gone: their settle's own delete did not
   * happen (the process stopped in between). Only folders older than `olderThanMs`, so a
   * create still between storing its inputs and inserting its row is left alone.
   */
  async sweepInputs(olderThanMs: number): Promise<number> {
    if (!this.inputs) return 0;
    let removed = 0;
    for (const id of await this.inputs.folders(olderThanMs)) {
      const status = await this.store.taskStatus(id);
      if (status === 'queued' || status === 'processing') continue;
      await this.inputs.discard(id);
      removed += 1;
    }
    return removed;
  }

  /** A page of the owner's tasks of one family, newest first. */
  list(query: TaskListQuery): Promise<Task[]> {
    return this.store.listTasks(query);
  }

  private newTask(owner: string, row: ModelRow): Task {
    const createdAt = this.now();
    return {
      id: newTaskId(row.kind, createdAt),
      kind: row.kind,
      model: row.id,
      owner,
      status: 'queued',
      progress: null,
      createdAt,
      startedAt: null,
      completedAt: null,
      error: null,
      outputs: [],
      attempt: 0,
      version: 0,
      usage: null,
    };
  }

  /** The owner's task with the parameters it was created with (the front doors' Video object shows some). */
  getWithParams(owner: string, id: string): Promise<TaskWithParams | undefined> {
    return this.store.getTaskWithParams(id, owner);
  }

  /** A page of the owner's tasks of one family with their parameters, in either order. */
  listWithParams(page: TaskParamsPage): Promise<TaskWithParams[]> {
    return this.store.listTasksWithParams(page);
  }

  /**
   * Deletes the owner's final task (the front doors' DELETE; cancel a running one first) with its
   * stored inputs; returns its outputs, whose files the caller deletes, or undefined when the
   * task is not there or not final. Every process's feed hears it (`changed`; on PostgreSQL the
   * delete's own notification), so no cache answers the task afterwards.
   */
  async deleteFinal(owner: string, id: string): Promise<{ id: string; outputs: TaskOutput[] } | undefined> {
    const deleted = await this.store.deleteFinalTask(id, owner);
    if (deleted === undefined) return undefined;
    this.emit('changed', { id });
    await this.inputs?.discard(id);
    return deleted;
  }

  get(owner: string, id: string): Promise<Task | undefined> {
    return this.store.getTask(id, owner);
  }

  /**
   * queued -> processing, or takeover of tasks whose worker's lease expired: up to `limit`
   * tasks, in the order they are due. Tasks whose workers died `maxAttempts` times are failed
   * first, so a poison task cannot loop forever.
   */
  async claimMany(workerId: string, leaseMs: number, maxAttempts: number, limit: number, skipKeys: readonly string[] = []): Promise<ClaimedTask[]> {
    await this.sweepAbandoned(maxAttempts);
    const now = this.now();
    return this.changedAll(await this.store.claimTasks(workerId, now, now + leaseMs, limit, skipKeys));
  }

  private changedAll<T extends { id: string }>(tasks: T[]): T[] {
    for (const task of tasks) this.emit('changed', { id: task.id });
    return tasks;
  }

  private changedIf(won: boolean, id: string): boolean {
    if (won) this.emit('changed', { id });
    return won;
  }

  /** claimMany of one task. */
  async claim(workerId: string, leaseMs: number, maxAttempts: number): Promise<ClaimedTask | undefined> {
    return (await this.claimMany(workerId, leaseMs, maxAttempts, 1))[0];
  }

  /**
   * The same transition for the task a queue job names. Undefined when the task is settled, or
   * running under a live lease: a duplicate or late job, which the caller ends as a no-op.
   */
  async claimById(id: string, workerId: string, leaseMs: number, maxAttempts: number): Promise<ClaimedTask | undefined> {
    await this.sweepAbandoned(maxAttempts);
    const now = this.now();
    const claimed = await this.store.claimTaskById(id, workerId, now, now + leaseMs);
    if (claimed) this.emit('changed', { id });
    return claimed;
  }

  private lastAbandonedSweep = Number.NEGATIVE_INFINITY;

  /**
   * failAbandoned before a claim, at most once a second: it is a sweep, and running it before
   * every claim doubled the writes of a busy worker. A task out of attempts waits at most a
   * second longer to be failed.
   */
  private async sweepAbandoned(maxAttempts: number): Promise<void> {
    const now = this.now();
    if (now - this.lastAbandonedSweep < 1000) return;
    this.lastAbandonedSweep = now;
    await this.failAbandoned(maxAttempts);
  }

  /** processing -> failed for tasks whose workers stopped `maxAttempts` times. */
  async failAbandoned(maxAttempts: number): Promise<number> {
    const abandoned = await this.store.failAbandoned(this.now(), maxAttempts, {
      type: 'generation_error',
      code: 'generation_failed',
      message: `The task was interrupted ${maxAttempts} times (its worker stopped) and was not retried again.`,
      param: '',
    });
    for (const id of abandoned) {
      this.emit('changed', { id });
      this.emit('settled', { id, status: 'failed' });
    }
    return abandoned.length;
  }

  /**
   * With a job queue: gives a new job to each runnable task that no live job will deliver
   * (a worker stopped holding it). Returns the task ids. No state changes: the job's handler
   * claims the task, which takes over an expired lease.
   */
  requeueStranded(staleMs: number): Promise<string[]> {
    return this.store.requeueStranded(this.now(), staleMs);
  }

  /**
   * Ends the leases of workers known to be dead (their process is gone), so their tasks are
   * taken over at once instead of when the lease would have expired. Returns tasks freed.
   */
  async recoverFrom(isDead: (owner: string) => boolean): Promise<number> {
    let freed = 0;
    for (const owner of await this.store.leaseOwners()) {
      if (isDead(owner)) freed += await this.store.expireLeases(owner, this.now());
    }
    return freed;
  }

  heartbeat(task: ClaimedTask, leaseMs: number): Promise<boolean> {
    return this.store.heartbeat(task.id, task.attempt, this.now() + leaseMs);
  }

  async progress(task: ClaimedTask, percent: number): Promise<boolean> {
    return this.changedIf(await this.store.setProgress(task.id, task.attempt, Math.max(0, Math.min(99, Math.round(percent)))), task.id);
  }

  /**
   * processing -> completed, with progress 100, the outputs, and the usage measured from the
   * delivered files (`metered`; undefined when they could not be measured: the requested
   * quantities). Its cost is written by the same guarded UPDATE, and charged to the key in its
   * transaction (the store's charge trigger), so it is charged once whatever happens around it.
   */
  async complete(task: ClaimedTask, outputs: readonly TaskOutput[], metered?: Metered): Promise<boolean> {
    const now = this.now();
    const usage = this.usageOf(task.model, task.params, metered);
    const won = this.changedIf(
      await inTaskSpan('mediagate.charge', this.traceOf(task.id), chargeAttributes(task, usage), () =>
        this.store.complete(task.id, task.attempt, outputs, now, usage),
      ),
      task.id,
    );
    if (won) this.emit('settled', { id: task.id, status: 'completed', model: task.model, usage, ...timings(task, now) });
    return won;
  }

  /**
   * Where a span of the task's life goes (tracing/): under the span running now when there is
   * one (the render, the output copy), else under the context its create stored.
   */
  traceOf(id: string): () => Promise<string | undefined> {
    return async () => (traceActive() ? undefined : this.store.taskTraceContext(id));
  }

  /** The context the task's create stored, whatever runs now (a worker woken inside another request). */
  storedTraceOf(id: string): () => Promise<string | undefined> {
    return () => this.store.taskTraceContext(id);
  }

  /** processing -> failed, keeping the last progress. */
  async fail(task: ClaimedTask, error: TaskError): Promise<boolean> {
    const now = this.now();
    const won = this.changedIf(await this.store.fail(task.id, task.attempt, error, now), task.id);
    if (won) this.emit('settled', { id: task.id, status: 'failed', model: task.model, code: error.code, ...timings(task, now) });
    return won;
  }

  // The upstream lifecycle (docs/channels.md "The lifecycle"): the scheduler's transitions.

  /** Due upstream tasks, each leased for `leaseMs` (its attempt is the fence of the step). */
  claimUpstream(leaseMs: number, limit: number): Promise<UpstreamTask[]> {
    const now = this.now();
    return this.store.claimUpstreamDue(now, now + leaseMs, limit);
  }

  nextUpstreamDue(): Promise<number | undefined> {
    return this.store.nextUpstreamDue();
  }

  countUpstreamInFlight(channel: string): Promise<number> {
    return this.store.countUpstreamInFlight(channel);
  }

  /** A non-final step: submitting, accepted (upstream id stored), queued -> processing, progress, failover. */
  async saveUpstream(task: UpstreamTask, step: UpstreamStep): Promise<boolean> {
    return this.changedIf(await this.store.saveUpstream(task.id, task.attempt, step), task.id);
  }

  /** queued -> `submitting` (the marker before the adapter's submit), within the channel's max_in_flight. */
  markSubmitting(task: UpstreamTask, step: UpstreamStep, maxInFlight: number, perKey: number | null = null): Promise<'marked' | 'full' | 'lost'> {
    return this.store.markSubmitting(task.id, task.attempt, step, { maxInFlight, owner: task.owner, perKey });
  }

  /** Whether the task's key could take a slot of its channel now (unlocked; markSubmitting decides). */
  hasUpstreamSlot(task: UpstreamTask, maxInFlight: number, perKey: number | null = null): Promise<boolean> {
    return this.store.hasSlot(task.channel, { maxInFlight, owner: task.owner, perKey });
  }

  /**
   * Books the next request slot of a channel's bucket (`perSecond` requests a second, shared by
   * every process on the database); resolves with when it starts (ms), now or later.
   */
  bookChannelSlot(channel: string, bucket: 'submit' | 'poll', perSecond: number): Promise<number> {
    return this.store.reserveChannelSlot(channel, bucket, this.now(), Math.ceil(1000 / perSecond));
  }

  /**
   * queued | processing -> completed, after the outputs were copied into our storage, with the
   * usage measured from the copies (as `complete`) and what the upstream reported about its own
   * usage, if anything (kept for the operator, never shown to the client).
   */
  async completeUpstream(task: UpstreamTask, outputs: readonly TaskOutput[], metered?: Metered, reportedUsage?: unknown): Promise<boolean> {
    const now = this.now();
    const usage = this.usageOf(task.model, task.params, metered);
    const upstreamUsage = reportedUsage === undefined ? undefined : JSON.stringify(reportedUsage);
    const won = this.changedIf(
      await inTaskSpan('mediagate.charge', this.traceOf(task.id), chargeAttributes(task, usage), () =>
        this.store.completeUpstream(task.id, task.attempt, outputs, now, task.startedAt ?? now, { ...usage, upstreamUsage }),
      ),
      task.id,
    );
    if (won)
      this.emit('settled', {
        id: task.id,
        status: 'completed',
        model: task.model,
        usage,
        ...(task.startedAt === null ? {} : { queuedMs: task.startedAt - task.createdAt, renderMs: now - task.startedAt }),
      });
    return won;
  }

  /** queued | processing -> failed, with the upstream's mapped code. */
  async failUpstream(task: UpstreamTask, error: TaskError): Promise<boolean> {
    const won = this.changedIf(await this.store.failUpstream(task.id, task.attempt, error, this.now()), task.id);
    if (won) this.emit('settled', { id: task.id, status: 'failed', model: task.model, code: error.code });
    return won;
  }

  /**
   * The upstream job of a task that was cancelled, for the one caller that cancels it upstream:
   * undefined once taken (or for a task that never went upstream). No state a client sees changes.
   */
  takeUpstreamCancel(id: string): Promise<UpstreamCancelRef | undefined> {
    return this.store.takeUpstreamCancel(id);
  }

  /** Cancels still owed to an upstream and due (retries, and cancels won by a process without channels), each leased for `leaseMs`. */
  claimUpstreamCancels(leaseMs: number, limit: number): Promise<PendingUpstreamCancel[]> {
    const now = this.now();
    return this.store.claimUpstreamCancels(now, now + leaseMs, limit);
  }

  /**
   * An upstream cancel that got no answer: tried again in `delayMs`, the wait the next retry
   * backs off from being `intervalMs` (by default the delay; kept as it was when the cancel only
   * waits for its channel's rate).
   */
  deferUpstreamCancel(ref: UpstreamCancelRef & { readonly upstreamId: string }, delayMs: number, intervalMs = delayMs): Promise<boolean> {
    return this.store.deferUpstreamCancel(ref, this.now() + delayMs, intervalMs);
  }

  finishUpstreamCancel(id: string): Promise<boolean> {
    return this.store.finishUpstreamCancel(id);
  }

  /** processing -> queued: handed back by a worker that is shutting down (with a new job, on a queue). */
  async release(task: ClaimedTask): Promise<boolean> {
    return this.changedIf(await this.store.release(task.id, task.attempt), task.id);
  }
}

import { EventEmitter } from 'node:events';
import type { ModelRow, ResolvedParams } from '../catalog/index.js';
import { newTaskId } from './ids.js';
import type { TaskStore } from './store/store.js';
import type { ClaimedTask, Task, TaskError, TaskOutput, UpstreamStep, UpstreamTask } from './types.js';

export interface TaskServiceEvents {
  created: [task: Task];
  settled: [task: { id: string; status: 'completed' | 'failed' }];
}

export interface TaskServiceOptions {
  readonly store: TaskStore;
  readonly now?: () => number;
  /** The channel of a model's first route target (default: every model renders in the sandbox). */
  readonly channelOf?: (model: string) => string;
}

/**
 * The one writer of task state. Each method is a named transition of the lifecycle
 *   queued -> processing -> completed | failed,  processing -> queued (handed back)
 * and returns whether it took effect: a worker that lost its lease gets `false` and must
 * throw its result away. Guarded by the store's `WHERE status = ... AND attempt = ...`.
 */
export class TaskService extends EventEmitter<TaskServiceEvents> {
  private readonly store: TaskStore;
  private readonly now: () => number;
  private readonly channelOf: (model: string) => string;

  constructor(options: TaskServiceOptions) {
    super();
    this.store = options.store;
    this.now = options.now ?? Date.now;
    this.channelOf = options.channelOf ?? (() => 'sandbox');
  }

  /** (none) -> queued. The task is durable when this resolves. */
  async create(owner: string, row: ModelRow, params: ResolvedParams): Promise<Task> {
    const createdAt = this.now();
    const task: Task = {
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
    };
    await this.store.insertTask({
      id: task.id,
      kind: task.kind,
      model: task.model,
      owner,
      params,
      createdAt: task.createdAt,
      channel: this.channelOf(row.id),
    });
    this.emit('created', task);
    return task;
  }

  get(owner: string, id: string): Promise<Task | undefined> {
    return this.store.getTask(id, owner);
  }

  /**
   * queued -> processing, or takeover of tasks whose worker's lease expired: up to `limit`
   * tasks, in the order they are due. Tasks whose workers died `maxAttempts` times are failed
   * first, so a poison task cannot loop forever.
   */
  async claimMany(workerId: string, leaseMs: number, maxAttempts: number, limit: number): Promise<ClaimedTask[]> {
    await this.sweepAbandoned(maxAttempts);
    const now = this.now();
    return this.store.claimTasks(workerId, now, now + leaseMs, limit);
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
    return this.store.claimTaskById(id, workerId, now, now + leaseMs);
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
    for (const id of abandoned) this.emit('settled', { id, status: 'failed' });
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

  progress(task: ClaimedTask, percent: number): Promise<boolean> {
    return this.store.setProgress(task.id, task.attempt, Math.max(0, Math.min(99, Math.round(percent))));
  }

  /** processing -> completed, with progress 100 and the outputs. */
  async complete(task: ClaimedTask, outputs: readonly TaskOutput[]): Promise<boolean> {
    const won = await this.store.complete(task.id, task.attempt, outputs, this.now());
    if (won) this.emit('settled', { id: task.id, status: 'completed' });
    return won;
  }

  /** processing -> failed, keeping the last progress. */
  async fail(task: ClaimedTask, error: TaskError): Promise<boolean> {
    const won = await this.store.fail(task.id, task.attempt, error, this.now());
    if (won) this.emit('settled', { id: task.id, status: 'failed' });
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
  saveUpstream(task: UpstreamTask, step: UpstreamStep): Promise<boolean> {
    return this.store.saveUpstream(task.id, task.attempt, step);
  }

  /** queued -> `submitting` (the marker before the adapter's submit), within the channel's max_in_flight. */
  markSubmitting(task: UpstreamTask, step: UpstreamStep, maxInFlight: number): Promise<'marked' | 'full' | 'lost'> {
    return this.store.markSubmitting(task.id, task.attempt, step, maxInFlight);
  }

  /**
   * Milliseconds to wait for the next request slot of a channel's bucket (`perSecond` requests
   * a second, shared by every process on the database).
   */
  async waitForChannelSlot(channel: string, bucket: 'submit' | 'poll', perSecond: number): Promise<number> {
    const now = this.now();
    return Math.max(0, (await this.store.reserveChannelSlot(channel, bucket, now, Math.ceil(1000 / perSecond))) - now);
  }

  /** queued | processing -> completed, after the outputs were copied into our storage. */
  async completeUpstream(task: UpstreamTask, outputs: readonly TaskOutput[]): Promise<boolean> {
    const now = this.now();
    const won = await this.store.completeUpstream(task.id, task.attempt, outputs, now, task.startedAt ?? now);
    if (won) this.emit('settled', { id: task.id, status: 'completed' });
    return won;
  }

  /** queued | processing -> failed, with the upstream's mapped code. */
  async failUpstream(task: UpstreamTask, error: TaskError): Promise<boolean> {
    const won = await this.store.failUpstream(task.id, task.attempt, error, this.now());
    if (won) this.emit('settled', { id: task.id, status: 'failed' });
    return won;
  }

  /** processing -> queued: handed back by a worker that is shutting down (with a new job, on a queue). */
  release(task: ClaimedTask): Promise<boolean> {
    return this.store.release(task.id, task.attempt);
  }
}

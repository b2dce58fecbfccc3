import { EventEmitter } from 'node:events';
import type { ModelRow, ResolvedParams } from '../catalog/index.js';
import type { TaskFailureCode } from '../failure-codes.js';
import { newTaskId } from './ids.js';
import type { TaskStore } from './store/store.js';
import type { ClaimedTask, Task, TaskError, TaskOutput } from './types.js';

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
}

export interface TaskServiceEvents {
  created: [task: Task];
  settled: [task: SettledTask];
  /** A transition took effect (after its commit): the task's row changed. tasks/feed.ts re-reads it. */
  changed: [task: { id: string }];
}

function timings(task: ClaimedTask, now: number): { queuedMs?: number; renderMs?: number } {
  return task.startedAt === null ? {} : { queuedMs: task.startedAt - task.createdAt, renderMs: now - task.startedAt };
}

export interface TaskServiceOptions {
  readonly store: TaskStore;
  readonly now?: () => number;
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

  constructor(options: TaskServiceOptions) {
    super();
    this.store = options.store;
    this.now = options.now ?? Date.now;
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
      version: 0,
    };
    await this.store.insertTask({ id: task.id, kind: task.kind, model: task.model, owner, params, createdAt: task.createdAt });
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
    return this.changedAll(await this.store.claimTasks(workerId, now, now + leaseMs, limit));
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

  /** processing -> completed, with progress 100 and the outputs. */
  async complete(task: ClaimedTask, outputs: readonly TaskOutput[]): Promise<boolean> {
    const now = this.now();
    const won = this.changedIf(await this.store.complete(task.id, task.attempt, outputs, now), task.id);
    if (won) this.emit('settled', { id: task.id, status: 'completed', model: task.model, ...timings(task, now) });
    return won;
  }

  /** processing -> failed, keeping the last progress. */
  async fail(task: ClaimedTask, error: TaskError): Promise<boolean> {
    const now = this.now();
    const won = this.changedIf(await this.store.fail(task.id, task.attempt, error, now), task.id);
    if (won) this.emit('settled', { id: task.id, status: 'failed', model: task.model, code: error.code, ...timings(task, now) });
    return won;
  }

  /** processing -> queued: handed back by a worker that is shutting down (with a new job, on a queue). */
  async release(task: ClaimedTask): Promise<boolean> {
    return this.changedIf(await this.store.release(task.id, task.attempt), task.id);
  }
}

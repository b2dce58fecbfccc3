import type { ClaimedTask } from '../../store/records.js';

/**
 * The seam between a worker pool and where its tasks come from. The pool renders; a source
 * claims tasks (a guarded transition through TaskService) and hands each claimed task to the
 * pool's `run`. Two sources exist:
 * - polling.ts: claims the oldest runnable task from the table (SQLite, one process);
 * - graphile.ts: a graphile-worker job names a task, the handler claims that task (PostgreSQL,
 *   any number of processes).
 */
export interface TaskRunner {
  /** Lease owner id of this pool (`host:pid:random`). */
  readonly workerId: string;
  /** Tasks to claim now: a render slot is free (tasks fetching their inputs hold none). */
  readonly idle: number;
  /** Tasks the runner holds at most: render slots plus its fetch stage (a job queue's concurrency). */
  readonly capacity: number;
  /** API keys whose tasks not to claim for now: the runner holds as many of theirs fetching as a key may. */
  readonly skipKeys: readonly string[];
  /** Whether the runner fetches inputs itself (it has a fetch stage): only then are keys ever skipped. */
  readonly fetchesInputs: boolean;
  /**
   * Resolves when a task that fetches nothing could take a render slot, promised to the caller
   * until it calls the function it gets (after `run`, or when it claimed nothing); undefined
   * when the runner is stopping (leave the task unclaimed).
   */
  renderRoom(): Promise<(() => void) | undefined>;
  /**
   * Renders a claimed task to its end: settled, handed back (the pool is stopping), or dropped
   * after a lost lease. Never rejects.
   */
  run(task: ClaimedTask, fetchPlace?: () => void): Promise<void>;
  /**
   * A place in the runner's fetch stage for a task of `key` about to be claimed; undefined when
   * the key holds its share already. Hand it to `run` with the task, or call it if the claim
   * found nothing.
   */
  takeFetchPlace(key: string): (() => void) | undefined;
}

export interface TaskSource {
  /** Begins handing claimed tasks to `runner`, never more at once than it has room for. */
  start(runner: TaskRunner): Promise<void>;
  /** A task was created in this process: look for work now (a hint; it may be ignored). */
  notify(): void;
  /** Stops claiming; resolves when no claim is in flight and every run it started has returned. */
  stop(): Promise<void>;
  /**
   * Claims nothing until resume() (the runner cannot work: its disk is full). A source that
   * claims only while the runner is `idle` needs neither: the runner answers 0 meanwhile.
   */
  pause?(): void;
  resume?(): void;
}

export interface TaskLog {
  debug?(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

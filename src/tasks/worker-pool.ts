import { inTaskSpan } from '../tracing/index.js';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { findModel, listedAspectRatios } from '../catalog/index.js';
import { EngineError, type Engine, type FetchedInputs, type RenderedFile, type RenderModelInfo } from '../engines/types.js';
import type { InputStore } from '../storage/inputs.js';
import type { OutputStorage } from '../storage/storage.js';
import type { TaskRunner, TaskSource } from './sources/source.js';
import type { TaskService } from './service.js';
import type { ClaimedTask, TaskError } from '../store/records.js';
import { Loop } from '../loop.js';
import { isDiskFull, OUTAGE_SEEN_MS, outageOf, type Health } from '../outages.js';
import { DiskWatch, type DiskProbe } from './disk-watch.js';
import { StorageUnavailableError, withStorageRetry } from './storage-retry.js';
import { endAttempt } from './attempt-end.js';

export interface WorkerPoolOptions {
  readonly service: TaskService;
  readonly engine: Engine;
  readonly storage: OutputStorage;
  /** Stored data-URL inputs: the task's references are read back for the engine. */
  readonly inputs?: InputStore;
  /** Renders at once (render slots). */
  readonly concurrency: number;
  /**
   * Tasks at once in the fetch stage, where a task's `https://` inputs are fetched before it
   * takes a render slot (MEDIAGATE_FETCH_CONCURRENCY). Default 8.
   */
  readonly fetchConcurrency?: number;
  /** Of those, fetching at once per API key (MEDIAGATE_FETCH_PER_KEY). Default 2. */
  readonly fetchPerKey?: number;
  readonly leaseMs: number;
  readonly maxAttempts: number;
  readonly renderTimeoutMs: number;
  /** Where attempts get their scratch directories. */
  readonly workRoot: string;
  /** Where claimed tasks come from: the backend's (tasks/backend.ts, the one place the modes differ). */
  readonly source: TaskSource;
  /** How long storing a finished render's files is retried through a media store outage (MEDIAGATE_STORAGE_RETRY_S). Default 300 s. */
  readonly storageRetryMs?: number;
  /** Where a full disk is reported (readiness, metrics). */
  readonly health?: Health;
  /** Tests: whether the scratch disk has room (default: a small file written into `workRoot`), and how often a full one is probed. */
  readonly diskProbe?: DiskProbe;
  readonly diskProbeMs?: number;
  readonly log: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
}

type Stop = 'shutdown' | 'lost-lease' | 'timeout' | 'cancelled';

/** What one attempt at a task holds while it runs (WorkerPool.render). */
interface Attempt {
  readonly task: ClaimedTask;
  readonly controller: AbortController;
  /** The pool's entry for the task: `rendering` once it holds a render slot. */
  readonly entry: { rendering: boolean };
  readonly workDir: string;
  inFetchStage: boolean;
  renderSlot: boolean;
  timeout: NodeJS.Timeout | undefined;
  /** The scratch directory is still to be removed. */
  scratchLeft: boolean;
}

/** How an attempt ended, and whether its settle won (a fenced one does not). */
interface Settled {
  readonly outcome: 'completed' | 'failed' | 'released' | 'cancelled';
  readonly won: boolean;
  readonly failure: string | undefined;
}

export const FETCH_DEFAULTS = { concurrency: 8, perKey: 2 } as const;

/** A counting semaphore whose waiters leave when their signal aborts. */
class Slots {
  private used = 0;
  private readonly waiters: { grant: () => void; signal: AbortSignal }[] = [];

  constructor(private readonly size: number) {}

  get busy(): boolean {
    return this.used > 0 || this.waiters.length > 0;
  }

  take(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.used < this.size) {
      this.used += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        signal,
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  give(): void {
    const next = this.waiters.shift();
    if (next) next.grant();
    else this.used -= 1;
  }
}

/**
 * Runs claimed tasks through the engine, `concurrency` at a time; a TaskSource does the
 * claiming. Each running task holds a lease that a heartbeat extends every third of the lease;
 * if the heartbeat finds the lease gone (another worker took over), the render is aborted and
 * its files are dropped.
 */
export class WorkerPool implements TaskRunner {
  /** `host:pid:random`: lets a restarted process on the same host spot leases of dead processes. */
  readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly running = new Map<string, { controller: AbortController; task: ClaimedTask; done: Promise<void>; rendering: boolean }>();
  private readonly renderSlots: Slots;
  private readonly fetchSlots: Slots;
  /** Per API key: its fetch slots, and its tasks in the fetch stage (fetching or waiting to). */
  private readonly keyFetchSlots = new Map<string, Slots>();
  private readonly staged = new Map<string, number>();
  private stagedTotal = 0;
  private readonly fetchPerKey: number;
  private readonly fetchConcurrency: number;
  private roomWaiters: (() => void)[] = [];
  /** Render slots promised to callers of renderRoom that have not handed their task to run yet. */
  private reserved = 0;
  /** Fetch places taken before a claim (takeFetchPlace) whose task is not in `running` yet. */
  private readonly pendingPlaces = new Set<() => void>();
  private stopping = false;
  private readonly stopReasons = new WeakMap<AbortController, Stop>();
  private readonly source: TaskSource;
  /** Set while the scratch disk is full: nothing is claimed until its probe finds room. */
  private readonly disk: DiskWatch;

  constructor(private readonly options: WorkerPoolOptions) {
    this.source = options.source;
    this.disk = new DiskWatch({
      root: options.workRoot,
      log: options.log,
      ...(options.health === undefined ? {} : { health: options.health }),
      ...(options.diskProbe === undefined ? {} : { probe: options.diskProbe }),
      ...(options.diskProbeMs === undefined ? {} : { intervalMs: options.diskProbeMs }),
      onFull: () => {
        this.source.pause?.();
        this.roomChanged();
      },
      onRoom: () => {
        this.source.resume?.();
        this.roomChanged();
        if (!this.stopping) this.source.notify();
      },
    });
    this.fetchConcurrency = Math.max(1, options.fetchConcurrency ?? FETCH_DEFAULTS.concurrency);
    this.fetchPerKey = Math.max(1, options.fetchPerKey ?? FETCH_DEFAULTS.perKey);
    this.renderSlots = new Slots(options.concurrency);
    this.fetchSlots = new Slots(this.fetchConcurrency);
    // A cancel in this process stops its render at once; one in another process is heard
    // through the task feed (tasks/remote-cancel.ts), or else found by the heartbeat (the
    // cancel bumped the attempt, so the fence is gone: lost-lease).
    options.service.on('cancelled', (task) => this.stopCancelled(task.id));
  }

  /** The task this pool is rendering under `id`, if any. */
  runningTask(id: string): ClaimedTask | undefined {
    return this.running.get(id)?.task;
  }

  /** Ids of the tasks this pool holds now (fetching inputs or rendering). */
  runningIds(): string[] {
    return [...this.running.keys()];
  }

  /** Stops the render of a task that was cancelled (its files are discarded), if one runs here. */
  stopCancelled(id: string): void {
    const entry = this.running.get(id);
    if (entry && !entry.controller.signal.aborted) {
      this.stopReasons.set(entry.controller, 'cancelled');
      entry.controller.abort(new Error('cancelled'));
    }
  }

  get workerId(): string {
    return this.id;
  }

  async start(): Promise<void> {
    const freed = await this.options.service.recoverFrom((owner) => isDeadLocalOwner(owner, this.id));
    if (freed > 0) this.options.log.info({ freed }, 'took over tasks of a stopped process on this host');
    await this.source.start(this);
  }

  get active(): number {
    return this.running.size;
  }

  /**
   * Tasks the source may claim now: a free render slot (tasks in the fetch stage hold none),
   * within render slots + fetch stage in all. A task whose inputs are still being fetched leaves
   * its render slot to the next task claimed, so a key's slow inputs delay only its own tasks.
   */
  get idle(): number {
    if (this.stopping || this.disk.full) return 0;
    const { concurrency } = this.options;
    const held = this.running.size + this.reserved + this.pendingPlaces.size;
    const holdingRender = held - this.stagedTotal;
    return Math.max(0, Math.min(concurrency - holdingRender, concurrency + this.fetchConcurrency - held));
  }

  /** Tasks this pool may hold at once: render slots plus the fetch stage (a job queue's concurrency). */
  get capacity(): number {
    return this.options.concurrency + this.fetchConcurrency;
  }

  /**
   * API keys whose tasks the source should not claim for now: this pool holds as many of their
   * tasks in the fetch stage as a key may fetch at once (MEDIAGATE_FETCH_PER_KEY).
   */
  get skipKeys(): readonly string[] {
    const keys: string[] = [];
    for (const [key, count] of this.staged) if (count >= this.fetchPerKey) keys.push(key);
    return keys;
  }

  /**
   * Resolves when a render slot is free for a task that fetches nothing (a job queue claims
   * then), with the slot promised to the caller until it calls the function it got: after
   * handing its claimed task to `run`, or finding nothing to claim. Undefined once the pool is
   * stopping: the caller leaves the task unclaimed.
   */
  renderRoom(): Promise<(() => void) | undefined> {
    return new Promise((resolve) => {
      const grant = (): void => {
        // A full disk: the task goes back unclaimed, for another process or for later.
        if (this.stopping || this.disk.full) {
          resolve(undefined);
          return;
        }
        this.reserved += 1;
        let given = false;
        resolve(() => {
          if (given) return;
          given = true;
          this.reserved -= 1;
          this.roomChanged();
        });
      };
      if (this.stopping || this.disk.full || this.idle > 0) grant();
      else this.roomWaiters.push(grant);
    });
  }

  /** The engine fetches a task's inputs ahead of its render (Engine.inputUrls and fetchInputs). */
  get fetchesInputs(): boolean {
    const { engine } = this.options;
    return engine.inputUrls !== undefined && engine.fetchInputs !== undefined;
  }

  /** Inputs a task fetches ahead of its render: none without an engine that says so. */
  needsFetch(task: Pick<ClaimedTask, 'model' | 'kind' | 'params'>): boolean {
    const { engine } = this.options;
    if (!engine.inputUrls || !engine.fetchInputs) return false;
    return engine.inputUrls({ model: this.modelInfo(task), params: task.params }).length > 0;
  }

  private roomChanged(): void {
    while (this.roomWaiters.length > 0 && (this.stopping || this.disk.full || this.idle > 0)) this.roomWaiters.shift()?.();
  }

  /**
   * A place in the fetch stage for a task of `key` about to be claimed (a job queue hands the
   * pool jobs from several handlers at once, so the count must rise before the claim, not
   * after); undefined when the key holds its share already. Give the function returned to `run`
   * with the task, or call it if nothing was claimed.
   */
  takeFetchPlace(key: string): (() => void) | undefined {
    if (this.stopping || this.disk.full || (this.staged.get(key) ?? 0) >= this.fetchPerKey) return undefined;
    this.enterFetchStage(key);
    const release = (): void => {
      if (!this.pendingPlaces.delete(release)) return;
      this.leaveFetchStage(key);
    };
    this.pendingPlaces.add(release);
    return release;
  }

  private enterFetchStage(key: string): void {
    this.staged.set(key, (this.staged.get(key) ?? 0) + 1);
    this.stagedTotal += 1;
  }

  private leaveFetchStage(key: string): void {
    const count = (this.staged.get(key) ?? 1) - 1;
    if (count <= 0) this.staged.delete(key);
    else this.staged.set(key, count);
    this.stagedTotal -= 1;
    // The key may be claimable again, and the pool's room changed.
    this.roomChanged();
    if (!this.stopping) this.source.notify();
  }

  /** The task's inputs, fetched within the process's and its key's fetch slots. */
  private async fetchStage(task: ClaimedTask, signal: AbortSignal): Promise<FetchedInputs> {
    const { engine } = this.options;
    if (!engine.fetchInputs) return new Map();
    let keySlots = this.keyFetchSlots.get(task.owner);
    if (!keySlots) {
      keySlots = new Slots(this.fetchPerKey);
      this.keyFetchSlots.set(task.owner, keySlots);
    }
    // The key's own slot first: a key waiting for itself holds none of the process's.
    await keySlots.take(signal);
    try {
      await this.fetchSlots.take(signal);
      try {
        return await engine.fetchInputs({ taskId: task.id, owner: task.owner, model: this.modelInfo(task), params: task.params, signal });
      } finally {
        this.fetchSlots.give();
      }
    } finally {
      keySlots.give();
      if (!keySlots.busy) this.keyFetchSlots.delete(task.owner);
    }
  }

  /** A task was created in this process: the source may look for work now. */
  notify(): void {
    if (!this.stopping) this.source.notify();
  }

  /**
   * Renders a task the source claimed, to its end. A task claimed while the pool is stopping
   * is handed straight back. Never rejects: a store failure is logged, and the task's lease
   * then expires so that another worker takes it over.
   */
  run(task: ClaimedTask, fetchPlace?: () => void): Promise<void> {
    if (this.stopping) {
      fetchPlace?.();
      return this.options.service.release(task).then(
        () => undefined,
        (error: unknown) => this.options.log.error({ err: error, task: task.id }, 'handing back a task failed'),
      );
    }
    const controller = new AbortController();
    const entry = { controller, task, done: Promise.resolve(), rendering: false };
    this.running.set(task.id, entry);
    // Counted in the fetch stage from the claim on, so that `idle` and `skipKeys` see it at once.
    const fetching = this.needsFetch(task);
    if (fetchPlace && !fetching) fetchPlace();
    // The place taken before the claim is the task's now (the run leaves the stage itself).
    else if (fetchPlace) this.pendingPlaces.delete(fetchPlace);
    else if (fetching) this.enterFetchStage(task.owner);
    const traced = { taskId: task.id, model: task.model, channel: 'sandbox', keyId: task.owner, extra: { 'mediagate.attempt': task.attempt } };
    entry.done = inTaskSpan('mediagate.render', this.options.service.storedTraceOf(task.id), traced, () => this.render(task, controller, fetching, entry))
      .catch((error: unknown) => this.options.log.error({ err: error, task: task.id }, 'recording a render failed'))
      .finally(() => {
        this.running.delete(task.id);
        this.roomChanged();
      });
    return entry.done;
  }

  private modelInfo(task: Pick<ClaimedTask, 'model' | 'kind'>): RenderModelInfo {
    const row = findModel(task.model);
    return {
      id: task.model,
      kind: task.kind,
      aspectRatios: row ? listedAspectRatios(row) : [],
      checkImageRule3: row?.kind === 'video' && row.imageRule3 === true,
    };
  }

  /** One attempt at a task, start to settle: each step below is one method. */
  private async render(task: ClaimedTask, controller: AbortController, fetching: boolean, entry: { rendering: boolean }): Promise<void> {
    const attempt: Attempt = {
      task,
      controller,
      entry,
      workDir: join(this.options.workRoot, `${task.id}-${task.attempt}`),
      inFetchStage: fetching,
      renderSlot: false,
      timeout: undefined,
      scratchLeft: true,
    };
    const heartbeat = this.startHeartbeat(attempt);
    const startedAt = Date.now();
    let settled: Settled;
    try {
      await this.clearEarlierAttempts(task);
      settled = await this.settleCompleted(attempt, await this.produce(attempt));
    } catch (error) {
      settled = await this.settleStopped(attempt, error);
    } finally {
      // Not awaited: a renewal in flight after the settle is fenced by the attempt, and a store
      // that hangs must not hold the slots.
      void heartbeat.stop();
      this.leaveSlots(attempt);
      await this.removeScratch(attempt);
    }
    this.logOutcome(task, settled, Date.now() - startedAt);
  }

  /** Aborts the attempt once, remembering why (the reason decides how it settles). */
  private stop(attempt: Attempt, reason: Stop): void {
    if (attempt.controller.signal.aborted) return;
    this.stopReasons.set(attempt.controller, reason);
    attempt.controller.abort(new Error(reason));
  }

  /** Renews the lease every lease/3; a lease found lost aborts the attempt. */
  private startHeartbeat(attempt: Attempt): Loop {
    const { service, leaseMs, log } = this.options;
    return new Loop({
      name: 'heartbeat',
      immediate: false,
      intervalMs: Math.max(500, Math.floor(leaseMs / 3)),
      turn: async () => {
        if (!(await service.heartbeat(attempt.task, leaseMs))) this.stop(attempt, 'lost-lease');
      },
      onError: (error) => log.warn({ err: error, task: attempt.task.id }, 'heartbeat failed'),
    }).start();
  }

  /**
   * Scratch left by earlier attempts that died with their process is this attempt's to clear.
   * So are outputs an earlier attempt stored but never settled: holding this attempt, no
   * earlier one can complete any more (its settle is fenced), so no stored file is in use.
   */
  private async clearEarlierAttempts(task: ClaimedTask): Promise<void> {
    for (let earlier = 1; earlier < task.attempt; earlier += 1) {
      await rm(join(this.options.workRoot, `${task.id}-${earlier}`), { recursive: true, force: true });
    }
    if (task.attempt > 1) await this.options.storage.discard(task.id);
  }

  /**
   * Inputs first, in the fetch stage (its own slots, the lease held, no render slot taken),
   * then a render slot, the render under its timeout, and the files stored.
   */
  /** The finished files of the attempt, in its work dir. */
  private async produce(attempt: Attempt): Promise<readonly RenderedFile[]> {
    const { task, controller } = attempt;
    const { engine } = this.options;
    let inputs: FetchedInputs | undefined;
    if (attempt.inFetchStage) {
      try {
        inputs = await this.fetchStage(task, controller.signal);
      } finally {
        attempt.inFetchStage = false;
        this.leaveFetchStage(task.owner);
      }
    }
    await this.renderSlots.take(controller.signal);
    attempt.renderSlot = true;
    attempt.entry.rendering = true;
    attempt.timeout = setTimeout(() => this.stop(attempt, 'timeout'), this.options.renderTimeoutMs);
    await mkdir(attempt.workDir, { recursive: true });
    // A stop while the directory was made (a short timeout on a loaded machine) must not reach
    // an engine that only listens for the abort event, which has already fired.
    if (controller.signal.aborted) throw controller.signal.reason;
    const result = await engine.render({
      taskId: task.id,
      owner: task.owner,
      model: this.modelInfo(task),
      params: task.params,
      ...(this.options.inputs === undefined ? {} : { readInput: this.options.inputs.reader(task.id) }),
      workDir: attempt.workDir,
      signal: controller.signal,
      onProgress: this.progressWriter(task),
      ...(inputs ? { inputs } : {}),
    });
    if (controller.signal.aborted) throw controller.signal.reason;
    // The render is done: storing its files is bounded by the storage retry window instead.
    clearTimeout(attempt.timeout);
    return result.files;
  }

  /**
   * A storage write of finished work, tried again through a media store outage for up to
   * MEDIAGATE_STORAGE_RETRY_S while the task stays `processing` (storage-retry.ts): an upload
   * that fails for a while must not throw away a finished render.
   */
  private store<T>(task: ClaimedTask, signal: AbortSignal, write: () => Promise<T>): Promise<T> {
    const { log, health } = this.options;
    let warned = false;
    return withStorageRetry(write, {
      windowMs: this.options.storageRetryMs ?? 300_000,
      signal,
      onRetry: (error, waitMs) => {
        health?.count('storage_write_retry');
        health?.set('storage', 'the media store is unreachable: finished work waits to be stored', OUTAGE_SEEN_MS);
        // One line per task, not one per try.
        if (!warned) log.warn({ err: error, task: task.id, waitMs }, 'storing the outputs failed: the media store is unreachable; retrying');
        warned = true;
      },
    });
  }

  /** The engine's progress, written once per visible step and at most five times a second. */
  private progressWriter(task: ClaimedTask): (percent: number) => void {
    const { service, log } = this.options;
    let lastProgress = -1;
    let lastWrite = 0;
    return (percent) => {
      const now = Date.now();
      // Polls see it rise without flooding the store.
      if (percent <= lastProgress || now - lastWrite < 200) return;
      lastProgress = percent;
      lastWrite = now;
      service.progress(task, percent).catch((error: unknown) => log.warn({ err: error, task: task.id }, 'progress write failed'));
    };
  }

  /** The end of a render: its files measured, stored (retried through an outage), the task completed (attempt-end.ts). */
  private async settleCompleted(attempt: Attempt, files: readonly RenderedFile[]): Promise<Settled> {
    const { service, storage, log } = this.options;
    const { task, controller } = attempt;
    const won = await endAttempt(files, {
      taskId: task.id,
      log,
      put: (file) => this.store(task, controller.signal, () => storage.put(task.id, file.path, file.ext)),
      // Scratch goes before the settle: a process killed after settling would leave it behind
      // for a final task, which no later attempt clears (test/crash-load.test.ts).
      beforeSettle: () => this.removeScratch(attempt),
      complete: (outputs, metered) => service.complete(task, outputs, metered),
      remove: (key) => storage.delete(key),
    });
    return { outcome: 'completed', won, failure: undefined };
  }

  /** An attempt that did not produce its files: handed back, cancelled, lost, or failed. */
  private async settleStopped(attempt: Attempt, error: unknown): Promise<Settled> {
    const { service, storage, log } = this.options;
    const { task } = attempt;
    const reason = this.stopReasons.get(attempt.controller);
    if (reason === 'shutdown') return { outcome: 'released', won: await service.release(task), failure: undefined };
    if (reason === 'cancelled') {
      // Final already (the cancel's attempt bump fences this one): drop what this task stored.
      await this.removeScratch(attempt);
      await storage.discard(task.id);
      return { outcome: 'cancelled', won: false, failure: undefined };
    }
    if (reason === 'lost-lease') {
      // A cancel made by another process also ends the lease (its attempt bump): then nobody
      // else will clear what this attempt stored. A takeover's new attempt clears it itself.
      const current = await service.get(task.owner, task.id);
      if (current?.status === 'cancelled') await storage.discard(task.id);
      return { outcome: 'failed', won: false, failure: 'lost_lease' };
    }
    // Neither is the task's fault: it goes back to the queue, unfailed (a full disk also stops
    // claiming here until there is room; a database that is gone gets the task back through
    // its lease if this hand-back cannot be written either).
    if (isDiskFull(error)) this.disk.markFull();
    else if (toTaskError(error, reason).code === 'generation_failed') await this.disk.check();
    if (this.disk.full || (!(error instanceof EngineError) && outageOf(error) === 'database')) {
      if (this.disk.full) this.options.health?.count('disk_full_handback');
      await this.removeScratch(attempt);
      return { outcome: 'released', won: await service.release(task), failure: undefined };
    }
    const taskError = toTaskError(error, reason);
    if (taskError.code === 'generation_failed') log.error({ err: error, task: task.id }, 'render failed');
    await this.removeScratch(attempt);
    return { outcome: 'failed', won: await service.fail(task, taskError), failure: taskError.code };
  }

  /** Whatever the attempt still holds: its timeout, its place in the fetch stage, its render slot. */
  private leaveSlots(attempt: Attempt): void {
    clearTimeout(attempt.timeout);
    if (attempt.inFetchStage) this.leaveFetchStage(attempt.task.owner);
    if (attempt.renderSlot) this.renderSlots.give();
  }

  private async removeScratch(attempt: Attempt): Promise<void> {
    if (!attempt.scratchLeft) return;
    attempt.scratchLeft = false;
    await rm(attempt.workDir, { recursive: true, force: true }).catch(() => {});
  }

  /** One line per outcome, worded for it: a failure is not "rendered". */
  private logOutcome(task: ClaimedTask, settled: Settled, durationMs: number): void {
    const { log } = this.options;
    const { outcome, won, failure } = settled;
    const line = { task: task.id, model: task.model, attempt: task.attempt, outcome, won, durationMs, failure };
    if (outcome === 'failed') log.warn(line, 'task failed');
    else log.info(line, outcome === 'completed' ? 'task completed' : outcome === 'cancelled' ? 'task cancelled' : 'task handed back');
  }

  /**
   * Stops claiming, lets running renders finish until `deadlineMs`, then aborts the rest and
   * hands them back to the queue so another worker (or the next start) runs them.
   */
  async close(deadlineMs = 10_000): Promise<void> {
    this.stopping = true;
    this.disk.stop();
    this.roomChanged();
    // The source stops claiming now, and resolves once every run it started has returned.
    const sourceStopped = this.source.stop();
    const all = (): Promise<unknown> => Promise.allSettled([...this.running.values()].map((entry) => entry.done));
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, deadlineMs);
    });
    // Tasks not rendering yet (fetching inputs, or waiting for a slot) go back at once.
    for (const entry of this.running.values()) {
      if (!entry.rendering && !entry.controller.signal.aborted) {
        this.stopReasons.set(entry.controller, 'shutdown');
        entry.controller.abort(new Error('shutdown'));
      }
    }
    await Promise.race([all(), expired]);
    clearTimeout(timer);
    for (const entry of this.running.values()) {
      if (!entry.controller.signal.aborted) {
        this.stopReasons.set(entry.controller, 'shutdown');
        entry.controller.abort(new Error('shutdown'));
      }
    }
    await all();
    await sourceStopped;
  }
}

/** True for an owner id of a process on this host that no longer exists. */
export function isDeadLocalOwner(owner: string, selfId: string): boolean {
  const [host, pid] = owner.split(':');
  if (host !== hostname() || pid === undefined || !/^\d+$/.test(pid)) return false;
  // Our own pid under another id: a previous incarnation (containers reuse pid 1 on restart).
  if (Number(pid) === process.pid) return owner !== selfId;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function toTaskError(error: unknown, reason: Stop | undefined): TaskError {
  if (reason === 'timeout') {
    return { type: 'generation_error', code: 'timeout', message: 'The render took longer than the configured limit.', param: '' };
  }
  if (error instanceof EngineError) return { type: 'generation_error', code: error.code, message: error.message, param: error.param };
  if (error instanceof StorageUnavailableError) {
    return {
      type: 'generation_error',
      code: 'storage_unavailable',
      message: `The render was done, but its files could not be stored: ${error.message}.`,
      param: '',
    };
  }
  return { type: 'generation_error', code: 'generation_failed', message: 'The engine failed to render this task.', param: '' };
}

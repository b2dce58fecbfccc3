import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { findModel, listedAspectRatios } from '../catalog/index.js';
import { EngineError, type Engine, type RenderModelInfo } from '../engines/types.js';
import type { InputStore } from '../storage/inputs.js';
import type { OutputStorage } from '../storage/storage.js';
import type { TaskRunner, TaskSource } from './sources/source.js';
import type { TaskService } from './service.js';
import type { ClaimedTask, TaskError, TaskOutput } from './types.js';

export interface WorkerPoolOptions {
  readonly service: TaskService;
  readonly engine: Engine;
  readonly storage: OutputStorage;
  /** Stored data-URL inputs: the task's references are read back for the engine. */
  readonly inputs?: InputStore;
  /** Renders at once. */
  readonly concurrency: number;
  readonly leaseMs: number;
  readonly maxAttempts: number;
  readonly renderTimeoutMs: number;
  /** Where attempts get their scratch directories. */
  readonly workRoot: string;
  /** Where claimed tasks come from: the backend's (tasks/backend.ts, the one place the modes differ). */
  readonly source: TaskSource;
  readonly log: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
}

type Stop = 'shutdown' | 'lost-lease' | 'timeout' | 'cancelled';

/**
 * Runs claimed tasks through the engine, `concurrency` at a time; a TaskSource does the
 * claiming. Each running task holds a lease that a heartbeat extends every third of the lease;
 * if the heartbeat finds the lease gone (another worker took over), the render is aborted and
 * its files are dropped.
 */
export class WorkerPool implements TaskRunner {
  /** `host:pid:random`: lets a restarted process on the same host spot leases of dead processes. */
  readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly running = new Map<string, { controller: AbortController; task: ClaimedTask; done: Promise<void> }>();
  private stopping = false;
  private readonly stopReasons = new WeakMap<AbortController, Stop>();
  private readonly source: TaskSource;

  constructor(private readonly options: WorkerPoolOptions) {
    this.source = options.source;
    // A cancel in this process stops its render at once; one in another process is found by
    // the heartbeat (the cancel bumped the attempt, so the fence is gone: lost-lease).
    options.service.on('cancelled', (task) => {
      const entry = this.running.get(task.id);
      if (entry && !entry.controller.signal.aborted) {
        this.stopReasons.set(entry.controller, 'cancelled');
        entry.controller.abort(new Error('cancelled'));
      }
    });
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

  get idle(): number {
    return this.stopping ? 0 : Math.max(0, this.options.concurrency - this.running.size);
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
  run(task: ClaimedTask): Promise<void> {
    if (this.stopping) {
      return this.options.service.release(task).then(
        () => undefined,
        (error: unknown) => this.options.log.error({ err: error, task: task.id }, 'handing back a task failed'),
      );
    }
    const controller = new AbortController();
    const entry = { controller, task, done: Promise.resolve() };
    this.running.set(task.id, entry);
    entry.done = this.render(task, controller)
      .catch((error: unknown) => this.options.log.error({ err: error, task: task.id }, 'recording a render failed'))
      .finally(() => {
        this.running.delete(task.id);
      });
    return entry.done;
  }

  private modelInfo(task: ClaimedTask): RenderModelInfo {
    const row = findModel(task.model);
    return {
      id: task.model,
      kind: task.kind,
      aspectRatios: row ? listedAspectRatios(row) : [],
      checkImageRule3: row?.kind === 'video' && row.imageRule3 === true,
    };
  }

  private async render(task: ClaimedTask, controller: AbortController): Promise<void> {
    const { service, engine, storage, leaseMs, log } = this.options;
    const workDir = join(this.options.workRoot, `${task.id}-${task.attempt}`);
    const abort = (reason: Stop): void => {
      if (controller.signal.aborted) return;
      this.stopReasons.set(controller, reason);
      controller.abort(new Error(reason));
    };
    const heartbeat = setInterval(
      () => {
        service.heartbeat(task, leaseMs).then(
          (held) => held || abort('lost-lease'),
          (error: unknown) => log.warn({ err: error, task: task.id }, 'heartbeat failed'),
        );
      },
      Math.max(500, Math.floor(leaseMs / 3)),
    );
    const timeout = setTimeout(() => abort('timeout'), this.options.renderTimeoutMs);
    let lastProgress = -1;
    let lastWrite = 0;
    const onProgress = (percent: number): void => {
      const now = Date.now();
      // One write per visible step, at most five a second: polls see it rise without flooding the store.
      if (percent <= lastProgress || now - lastWrite < 200) return;
      lastProgress = percent;
      lastWrite = now;
      service.progress(task, percent).catch((error: unknown) => log.warn({ err: error, task: task.id }, 'progress write failed'));
    };
    let outcome: 'completed' | 'failed' | 'released' | 'cancelled';
    let failure: string | undefined;
    const startedAt = Date.now();
    let won: boolean;
    let scratchLeft = true;
    const removeScratch = async (): Promise<void> => {
      if (!scratchLeft) return;
      scratchLeft = false;
      await rm(workDir, { recursive: true, force: true }).catch(() => {});
    };
    try {
      // Scratch left by earlier attempts that died with their process is this attempt's to clear.
      for (let earlier = 1; earlier < task.attempt; earlier += 1) {
        await rm(join(this.options.workRoot, `${task.id}-${earlier}`), { recursive: true, force: true });
      }
      // So are outputs an earlier attempt stored but never settled: holding this attempt, no
      // earlier one can complete any more (its settle is fenced), so no stored file is in use.
      if (task.attempt > 1) await storage.discard(task.id);
      await mkdir(workDir, { recursive: true });
      const result = await engine.render({
        taskId: task.id,
        owner: task.owner,
        model: this.modelInfo(task),
        params: task.params,
        ...(this.options.inputs === undefined ? {} : { readInput: this.options.inputs.reader(task.id) }),
        workDir,
        signal: controller.signal,
        onProgress,
      });
      if (controller.signal.aborted) throw controller.signal.reason;
      const outputs: TaskOutput[] = [];
      for (const file of result.files) {
        outputs.push({ type: file.type, key: await storage.put(task.id, file.path, file.ext), contentType: file.contentType });
      }
      outcome = 'completed';
      // Scratch goes before the settle: a process killed after settling would leave it behind
      // for a final task, which no later attempt clears (test/crash-load.test.ts).
      await removeScratch();
      won = await service.complete(task, outputs);
      if (!won) await Promise.all(outputs.map((output) => storage.delete(output.key)));
    } catch (error) {
      const reason = this.stopReasons.get(controller);
      if (reason === 'shutdown') {
        outcome = 'released';
        won = await service.release(task);
      } else if (reason === 'cancelled') {
        // Final already (the cancel's attempt bump fences this one): drop what this task stored.
        outcome = 'cancelled';
        won = false;
        await removeScratch();
        await storage.discard(task.id);
      } else if (reason === 'lost-lease') {
        outcome = 'failed';
        failure = 'lost_lease';
        won = false;
        // A cancel made by another process also ends the lease (its attempt bump): then nobody
        // else will clear what this attempt stored. A takeover's new attempt clears it itself.
        const current = await service.get(task.owner, task.id);
        if (current?.status === 'cancelled') await storage.discard(task.id);
      } else {
        outcome = 'failed';
        const taskError = toTaskError(error, reason);
        failure = taskError.code;
        if (taskError.code === 'generation_failed') log.error({ err: error, task: task.id }, 'render failed');
        await removeScratch();
        won = await service.fail(task, taskError);
      }
    } finally {
      clearInterval(heartbeat);
      clearTimeout(timeout);
      await removeScratch();
    }
    // One line per outcome, worded for it: a failure is not "rendered".
    const line = { task: task.id, model: task.model, attempt: task.attempt, outcome, won, durationMs: Date.now() - startedAt, failure };
    if (outcome === 'failed') log.warn(line, 'task failed');
    else log.info(line, outcome === 'completed' ? 'task completed' : outcome === 'cancelled' ? 'task cancelled' : 'task handed back');
  }

  /**
   * Stops claiming, lets running renders finish until `deadlineMs`, then aborts the rest and
   * hands them back to the queue so another worker (or the next start) runs them.
   */
  async close(deadlineMs = 10_000): Promise<void> {
    this.stopping = true;
    // The source stops claiming now, and resolves once every run it started has returned.
    const sourceStopped = this.source.stop();
    const all = (): Promise<unknown> => Promise.allSettled([...this.running.values()].map((entry) => entry.done));
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, deadlineMs);
    });
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
  return { type: 'generation_error', code: 'generation_failed', message: 'The engine failed to render this task.', param: '' };
}

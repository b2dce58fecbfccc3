import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Loop } from '../loop.js';
import { isDiskFull, type Health } from '../outages.js';

/** True when the disk has room for a render's scratch files. */
export type DiskProbe = () => Promise<boolean>;

/** What the default probe writes: a render needs at least this much scratch room. */
const PROBE_BYTES = 1024 * 1024;

/** Writes (and removes) a small file under `root`: ENOSPC or EDQUOT means no room. */
export function writeProbe(root: string): DiskProbe {
  return async () => {
    const path = join(root, `.space-probe-${randomBytes(4).toString('hex')}`);
    try {
      await writeFile(path, Buffer.alloc(PROBE_BYTES));
      return true;
    } catch (error) {
      if (isDiskFull(error)) return false;
      // Any other failure is not a full disk: the render's own error says what it is.
      return true;
    } finally {
      await rm(path, { force: true }).catch(() => {});
    }
  };
}

export interface DiskWatchOptions {
  /** The worker's scratch directory (under the data directory). */
  readonly root: string;
  readonly log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void; info(obj: object, msg: string): void };
  readonly health?: Health;
  /** Default writeProbe(root). */
  readonly probe?: DiskProbe;
  /** How often a full disk is probed for room. Default 5 s. */
  readonly intervalMs?: number;
  /** The disk became full: stop claiming. */
  readonly onFull: () => void;
  /** There is room again: claim again. */
  readonly onRoom: () => void;
}

/**
 * A worker's scratch disk, full or not. A render that fails on a full disk is not the task's
 * fault: the worker pool hands the task back to the queue, and this watch keeps the process
 * from claiming more (which would fail the same way) until a probe, every `intervalMs`, finds
 * room again. Reported in the logs, in readiness (`disk`) and in the metrics.
 */
export class DiskWatch {
  /** Probes for room while the disk is full; started by markFull, stopped when there is room. */
  private readonly probing: Loop;
  private isFull = false;
  private stopped = false;
  private readonly probe: DiskProbe;

  constructor(private readonly options: DiskWatchOptions) {
    this.probe = options.probe ?? writeProbe(options.root);
    this.probing = new Loop({
      name: 'disk-watch',
      immediate: false,
      intervalMs: options.intervalMs ?? 5000,
      turn: () => this.probeAgain(),
      onError: (error) => options.log.warn({ err: error, dir: options.root }, 'probing the disk for room failed'),
    });
  }

  get full(): boolean {
    return this.isFull;
  }

  /** After a failure that may have been the disk's: probes, and marks the disk full when it has no room. Returns whether it is full. */
  async check(): Promise<boolean> {
    if (this.full) return true;
    if (await this.probe().catch(() => true)) return false;
    this.markFull();
    return true;
  }

  /** An error said the disk is full (ENOSPC): stop claiming until a probe finds room. */
  markFull(): void {
    if (this.full || this.stopped) return;
    const { log, health } = this.options;
    log.error({ dir: this.options.root }, 'the disk is full: this worker claims no task until there is room again (tasks it held went back to the queue)');
    health?.set('disk', `the disk of ${this.options.root} is full: no task is claimed until there is room`);
    this.isFull = true;
    this.probing.start();
    this.options.onFull();
  }

  private async probeAgain(): Promise<void> {
    if (!this.full) return;
    if (!(await this.probe().catch(() => false))) return;
    this.isFull = false;
    // Not awaited: this is the loop's own turn, which its stop would wait for.
    void this.probing.stop();
    this.options.health?.set('disk', undefined);
    this.options.log.info({ dir: this.options.root }, 'the disk has room again: claiming tasks again');
    if (!this.stopped) this.options.onRoom();
  }

  stop(): void {
    this.stopped = true;
    void this.probing.stop();
  }
}

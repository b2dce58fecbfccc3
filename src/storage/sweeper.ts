import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Loop } from '../loop.js';
import type { OutputStorage } from './storage.js';
import type { SweepTurn } from './sweep-turn.js';

export interface SweeperOptions {
  readonly storage: OutputStorage;
  /** How long outputs, and the render-cache entries they were made from, are kept. */
  readonly outputTtlMs: number;
  /** Scratch directories of render attempts, and how old one must be to be dead. */
  readonly workRoot: string;
  readonly workDirMaxAgeMs: number;
  readonly renderCacheRoot: string;
  readonly intervalMs: number;
  /** When set, the listing of outputs runs only when this process takes the turn (shared media: sweep-turn.ts). */
  readonly listingTurn?: SweepTurn;
  readonly log: { info(fields: object, msg: string): void; warn(fields: object, msg: string): void };
}

export interface Sweeper {
  /** Resolves when a sweep that runs has ended. */
  stop(): Promise<void>;
}

/** Removes the entries of `root` last modified before `olderThanMs`. */
async function sweepDirs(root: string, olderThanMs: number): Promise<void> {
  for (const entry of await readdir(root).catch(() => [] as string[])) {
    const path = join(root, entry);
    const info = await stat(path).catch(() => undefined);
    if (info && info.mtimeMs < olderThanMs) await rm(path, { recursive: true, force: true }).catch(() => {});
  }
}

/**
 * The loop (not started) that deletes, at its start and then every `intervalMs`, expired
 * outputs, render-cache entries as old, and scratch directories of attempts that died with
 * their process.
 */
export function sweeperLoop(options: SweeperOptions): Loop {
  const sweep = async (): Promise<void> => {
    const now = Date.now();
    if (options.listingTurn === undefined || (await options.listingTurn(now))) {
      const removed = await options.storage.sweep(now - options.outputTtlMs);
      if (removed > 0) options.log.info({ removed }, 'expired outputs deleted');
    }
    await sweepDirs(options.workRoot, now - options.workDirMaxAgeMs);
    // Render cache entries live as long as the outputs they were made for.
    await sweepDirs(options.renderCacheRoot, now - options.outputTtlMs);
  };
  return new Loop({
    name: 'sweeper',
    turn: sweep,
    intervalMs: options.intervalMs,
    onError: (error) => options.log.warn({ err: error }, 'sweep failed'),
  });
}

/** The sweeper, started. */
export function startSweeper(options: SweeperOptions): Sweeper {
  return sweeperLoop(options).start();
}

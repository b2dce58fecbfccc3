import { setTimeout as sleep } from 'node:timers/promises';
import { outageOf } from '../outages.js';

/** The media store stayed unreachable for the whole retry window: the task fails `storage_unavailable`. */
export class StorageUnavailableError extends Error {
  override readonly name = 'StorageUnavailableError';
}

/** The first wait between two tries of a storage write, and the longest (the waits double in between). */
export const STORAGE_RETRY_BACKOFF_MS = { first: 250, max: 5000 } as const;

export interface StorageRetryOptions {
  /** How long the write may keep failing before the task fails (MEDIAGATE_STORAGE_RETRY_S). */
  readonly windowMs: number;
  /** The attempt stopped (shutdown, cancel, lost lease): no more tries. */
  readonly signal: AbortSignal;
  /** Told of each failed try that will be tried again. */
  readonly onRetry: (error: unknown, waitMs: number) => void;
}

/**
 * Runs `write` (a storage write of finished work) until it succeeds, trying again after a
 * doubling wait while it fails with a media store outage (outages.ts) and the window lasts. The
 * task holds its lease meanwhile (the worker pool's heartbeat runs on), so it stays
 * `processing` and nobody else takes it. Any other error is thrown as it is (a full disk is the
 * worker pool's to handle); an outage that outlasts the window throws StorageUnavailableError.
 */
export async function withStorageRetry<T>(write: () => Promise<T>, options: StorageRetryOptions): Promise<T> {
  const deadline = Date.now() + options.windowMs;
  let wait: number = STORAGE_RETRY_BACKOFF_MS.first;
  for (;;) {
    try {
      return await write();
    } catch (error) {
      if (outageOf(error) !== 'storage') throw error;
      options.signal.throwIfAborted();
      const left = deadline - Date.now();
      if (left <= 0) throw new StorageUnavailableError(`the media store was unreachable for ${Math.round(options.windowMs / 1000)} s`, { cause: error });
      const next = Math.min(wait, left);
      options.onRetry(error, next);
      await sleep(next, undefined, { signal: options.signal });
      wait = Math.min(wait * 2, STORAGE_RETRY_BACKOFF_MS.max);
    }
  }
}

// The one way a spec waits: for a condition, with a deadline, never for a fixed time. Where an
// event says when to look again (a log line, a child's output, a task settling), pass it as
// `wake` and the condition is checked at once on each event instead of on the next tick.
import { EventEmitter } from 'node:events';

export interface EventuallyOptions {
  /** How long the condition may take, in ms, before the wait fails. Default 5 s. */
  deadline?: number;
  /** How often to check again when no event wakes the wait, in ms. Default 25 ms. */
  interval?: number;
  /** Named in the failure: "timed out after 5000 ms waiting for <what>". */
  what?: string;
  /** Checked again at once whenever this emitter emits `event` (default 'change'). */
  wake?: { emitter: EventEmitter; event?: string };
}

/** Resolves with the first value of `condition` that is neither undefined nor false; an error thrown by it counts as "not yet". */
export async function eventually<T>(condition: () => T | undefined | false | Promise<T | undefined | false>, options: EventuallyOptions = {}): Promise<T> {
  const { deadline = 5_000, interval = 25, what = 'the condition', wake } = options;
  const giveUp = Date.now() + deadline;
  let lastError: unknown;
  let wakeUp: (() => void) | undefined;
  // An event while the condition runs is not lost: the next sleep is skipped.
  let woken = false;
  const onEvent = (): void => {
    woken = true;
    wakeUp?.();
  };
  wake?.emitter.on(wake.event ?? 'change', onEvent);
  try {
    for (;;) {
      try {
        const value = await condition();
        if (value !== undefined && value !== false) return value;
      } catch (error) {
        lastError = error;
      }
      const left = giveUp - Date.now();
      if (left <= 0) {
        const cause = lastError instanceof Error ? `: last error: ${lastError.message}` : '';
        throw new Error(`timed out after ${deadline} ms waiting for ${what}${cause}`, { cause: lastError });
      }
      if (woken) {
        woken = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(interval, left));
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = undefined;
      woken = false;
    }
  } finally {
    wake?.emitter.off(wake.event ?? 'change', onEvent);
  }
}

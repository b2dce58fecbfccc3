import type { TaskFeed } from '../tasks/feed.js';
import type { TaskService } from '../tasks/service.js';
import type { Task } from '../store/records.js';

const ended = (task: Task): boolean => task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled';

/**
 * The task once it has ended, or undefined when `timeoutMs` passed or `signal` aborted first.
 * Waits on the task feed (tasks/feed.ts: the service's `changed` events, or PostgreSQL's
 * notifications from whichever process runs the task): subscribed before the first read, so no
 * change falls between; a held request costs a listener and a timer, never a poll of the store.
 */
export function waitForEnd(feed: TaskFeed, service: TaskService, owner: string, id: string, timeoutMs: number, signal: AbortSignal): Promise<Task | undefined> {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (task: Task | undefined, error?: Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unsubscribe();
      signal.removeEventListener('abort', aborted);
      if (error === undefined) resolve(task);
      else reject(error);
    };
    const aborted = (): void => finish(undefined);
    const unsubscribe = feed.subscribe(owner, id, (task) => {
      if (ended(task)) finish(task);
    });
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    signal.addEventListener('abort', aborted);
    if (signal.aborted) {
      aborted();
      return;
    }
    service.get(owner, id).then(
      (task) => {
        if (task !== undefined && ended(task)) finish(task);
      },
      (error: unknown) => finish(undefined, error instanceof Error ? error : new Error('the task could not be read')),
    );
  });
}

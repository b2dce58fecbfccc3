import type { TaskFeed } from './feed.js';
import type { TaskService } from './service.js';
import type { WorkerPool } from './worker-pool.js';

/**
 * A cancel made in another process (an API process, on PostgreSQL) stops this process's render
 * at once, as one made here does (decisions §8: "its render ... is stopped"), instead of at the render's next heartbeat:
 * the feed hears every task change, and a change of a task rendering here is read back; if it
 * is cancelled, the pool aborts the render and discards its files. A notification missed while
 * the LISTEN connection was down is covered by re-reading every running task when it is back,
 * and in the last resort by the heartbeat (the cancel's attempt bump ends the lease).
 */
export function stopRemoteCancels(
  feed: TaskFeed,
  pool: Pick<WorkerPool, 'runningTask' | 'runningIds' | 'stopCancelled'>,
  service: Pick<TaskService, 'get'>,
  log: { warn(obj: object, msg: string): void },
): () => void {
  // One read in flight per task; changes during it (progress, say) ask for one more.
  const reading = new Set<string>();
  const again = new Set<string>();
  const check = async (id: string): Promise<void> => {
    if (reading.has(id)) {
      again.add(id);
      return;
    }
    reading.add(id);
    try {
      do {
        again.delete(id);
        const running = pool.runningTask(id);
        if (running === undefined) return;
        const task = await service.get(running.owner, id);
        if (task?.status === 'cancelled') pool.stopCancelled(id);
      } while (again.has(id));
    } catch (error) {
      log.warn({ err: error, task: id }, 'could not read a changed task to see whether it was cancelled');
    } finally {
      reading.delete(id);
      again.delete(id);
    }
  };
  return feed.watchAll((id) => {
    for (const one of id === null ? pool.runningIds() : [id]) {
      if (pool.runningTask(one) !== undefined) void check(one);
    }
  });
}

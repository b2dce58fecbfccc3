import { Loop } from '../../loop.js';
import type { TaskService } from '../service.js';
import type { TaskLog, TaskRunner, TaskSource } from './source.js';

export interface PollingSourceOptions {
  readonly service: TaskService;
  readonly leaseMs: number;
  readonly maxAttempts: number;
  /** How often to look for work that no local event announced (expired leases, other writers). */
  readonly pollMs?: number;
  readonly log: TaskLog;
}

/**
 * Claims the oldest runnable task straight from the table whenever the runner has room: at
 * every local creation (notify), when a run ends, and every `pollMs`. The embedded (SQLite)
 * mode's source; expired leases are taken over by the same claim.
 */
export class PollingTaskSource implements TaskSource {
  private stopping = false;
  /** Each turn claims until the runner is full or nothing is left; wake-ups during one coalesce. */
  private claims: Loop | undefined;
  private readonly runs = new Set<Promise<void>>();

  constructor(private readonly options: PollingSourceOptions) {}

  start(runner: TaskRunner): Promise<void> {
    this.claims = new Loop({
      name: 'claims',
      intervalMs: this.options.pollMs ?? 1000,
      turn: () => this.fill(runner),
      onError: (error) => this.options.log.error({ err: error }, 'claiming tasks failed'),
    }).start();
    return Promise.resolve();
  }

  /** Looks for work now; cheap to call often (calls coalesce). */
  notify(): void {
    if (!this.stopping) this.claims?.notify();
  }

  private async fill(runner: TaskRunner): Promise<void> {
    const { service, leaseMs, maxAttempts } = this.options;
    while (!this.stopping && runner.idle > 0) {
      // As many as the runner has room for, in one claim: one write instead of one per task.
      // Fair order between keys (the claim's ORDER BY), minus the keys the runner holds enough of.
      const tasks = await service.claimMany(runner.workerId, leaseMs, maxAttempts, runner.idle, runner.skipKeys);
      for (const task of tasks) {
        const run: Promise<void> = runner.run(task).finally(() => {
          this.runs.delete(run);
          this.notify();
        });
        this.runs.add(run);
      }
      if (tasks.length === 0) return;
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.claims?.stop();
    await Promise.allSettled([...this.runs]);
  }
}

import { Counter, Gauge, type Registry } from 'prom-client';
import type { Health } from '../../outages.js';

/** The checks readiness reports on; each has its series, 0 while it is fine. */
const CHECKS = ['database', 'storage', 'job_runner', 'disk'] as const;

/**
 * What `health` (outages.ts) knows, as series read at each scrape: which check fails now, how
 * often the job runner was started again, how many storage writes of finished work were
 * retried, how often a full disk handed a task back.
 */
export function registerHealthMetrics(registry: Registry, health: Health): void {
  new Gauge({
    name: 'mediagate_dependency_down',
    help: 'A check of readiness that fails now (1) or not (0): database, storage, job_runner, disk',
    labelNames: ['check'],
    registers: [registry],
    collect() {
      for (const check of CHECKS) this.set({ check }, health.problem(check) === undefined ? 0 : 1);
    },
  });
  const counter = (name: string, help: string, event: string): void => {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(health.counted(event));
      },
    });
  };
  counter('mediagate_job_runner_restarts_total', 'Times the job runner (graphile-worker) stopped and was started again', 'job_runner_restart');
  counter('mediagate_storage_write_retries_total', 'Storage writes of finished work tried again after the media store failed', 'storage_write_retry');
  counter('mediagate_disk_full_handbacks_total', 'Tasks handed back to the queue because the disk was full', 'disk_full_handback');
}

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type CounterConfiguration, type LabelValues } from 'prom-client';
import { createChannelMetrics, type ChannelMetrics } from '../../channels/metrics.js';
import type { SettledTask } from '../../tasks/service.js';
import type { TaskStatus } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import { outageOf } from '../../outages.js';

/** One labelled series of a TalliedCounter: increments counted in a number. */
export interface Tally {
  inc(): void;
}

class OpenTally<L extends string> implements Tally {
  count = 0;
  constructor(readonly labels: LabelValues<L>) {}
  inc(): void {
    this.count += 1;
  }
}

/**
 * A counter that requests increment: prom-client hashes and checks a child's label values at
 * each `inc` (a few series per create, ~5% of a create's CPU outside the store and node:http,
 * docs/benchmarks.md). A tally adds 1 to a number instead; the counter's `collect`, which
 * prom-client runs at every read of the series (a scrape, `registry.metrics()`, `get()`), adds
 * each tally's count in one `inc`. A tally is for a series used again and again (a route, a
 * model): each one is kept for the life of the counter.
 */
export class TalliedCounter<L extends string = string> extends Counter<L> {
  private readonly tallies: OpenTally<L>[] = [];

  constructor(config: Omit<CounterConfiguration<L>, 'collect'>) {
    super({
      ...config,
      collect() {
        if (this instanceof TalliedCounter) this.flush();
      },
    });
  }

  /** The series of these label values (all of them; `{}` for a counter without labels). */
  tally(labels: LabelValues<L>): Tally {
    const tally = new OpenTally(labels);
    this.tallies.push(tally);
    return tally;
  }

  private flush(): void {
    for (const tally of this.tallies) {
      if (tally.count === 0) continue;
      this.inc(tally.labels, tally.count);
      tally.count = 0;
    }
  }
}

/** Every status the tasks gauge reports, 0 when no task has it (a scrape never sees a gap). */
export const GAUGE_STATUSES: readonly TaskStatus[] = ['queued', 'processing', 'completed', 'failed', 'cancelled'];

/** Seconds: from a fast instant render to the longest a render may take (600 s by default). */
const TASK_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

/** Task series, in the API process and in each `mediagate worker` process. */
export interface TaskMetrics {
  readonly registry: Registry;
  /** Labels: the model, the final status, and the failure code ('' unless failed). */
  readonly tasksSettled: Counter<'model' | 'status' | 'code'>;
  readonly queueWait: Histogram<'model'>;
  readonly renderTime: Histogram<'model'>;
  readonly tasksByStatus: Gauge<'status'>;
  /** Webhook delivery attempts by outcome: succeeded, retried (failed, another attempt is due), failed (the last). */
  readonly webhookDeliveries: Counter<'outcome'>;
  /** What tasks completed in this process cost, in micro-units of the pricing currency, by model (no key: keys are many). */
  readonly costMicro: Counter<'model'>;
  /** Billed seconds of video of tasks completed in this process, by model. */
  readonly billedSeconds: Counter<'model'>;
}

/** Prometheus metrics of one API process, served at GET /metrics. */
export interface Metrics extends TaskMetrics {
  readonly requests: TalliedCounter<'route' | 'method' | 'status'>;
  readonly duration: Histogram<'route'>;
  /** Status polls answered before routing (http/dispatch.ts); also counted in `requests`. */
  readonly fastPolls: TalliedCounter;
  readonly fastCreates: TalliedCounter;
  readonly tasksCreated: TalliedCounter<'kind' | 'model'>;
  /** Creates refused with 402 budget_exceeded, by the key's budget period (day, month, lifetime). */
  readonly budgetRefusals: Counter<'reason'>;
  /** Creates on a deprecated model (after its `deprecated_at`), by model: who still uses it before it retires. */
  readonly deprecatedCreates: Counter<'model'>;
  /** Per-channel series (src/channels/metrics.ts), recorded by the upstream lifecycle. */
  readonly channels: ChannelMetrics;
}

export function createTaskMetrics(registry = new Registry()): TaskMetrics {
  collectDefaultMetrics({ register: registry, prefix: 'mediagate_' });
  return {
    registry,
    tasksSettled: new Counter({
      name: 'mediagate_tasks_settled_total',
      help: 'Tasks that reached a final state in this process, by model, status and failure code',
      labelNames: ['model', 'status', 'code'],
      registers: [registry],
    }),
    queueWait: new Histogram({
      name: 'mediagate_task_queue_wait_seconds',
      help: 'Time from creation to the start of rendering, of tasks settled in this process',
      labelNames: ['model'],
      buckets: TASK_BUCKETS,
      registers: [registry],
    }),
    renderTime: new Histogram({
      name: 'mediagate_task_render_seconds',
      help: 'Time from the start of rendering to the final state, of tasks settled in this process',
      labelNames: ['model'],
      buckets: TASK_BUCKETS,
      registers: [registry],
    }),
    tasksByStatus: new Gauge({ name: 'mediagate_tasks', help: 'Tasks in the store by status', labelNames: ['status'], registers: [registry] }),
    webhookDeliveries: new Counter({
      name: 'mediagate_webhook_attempts_total',
      help: 'Webhook delivery attempts made by this process, by outcome (succeeded, retried, failed after the last attempt)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    costMicro: new Counter({
      name: 'mediagate_task_cost_micro_total',
      help: 'Cost of the tasks completed in this process, in micro-units (1/1,000,000) of the pricing currency, by model',
      labelNames: ['model'],
      registers: [registry],
    }),
    billedSeconds: new Counter({
      name: 'mediagate_task_billed_seconds_total',
      help: 'Billed seconds of video (the delivered duration, rounded) of the tasks completed in this process, by model',
      labelNames: ['model'],
      registers: [registry],
    }),
  };
}

export function createMetrics(): Metrics {
  const task = createTaskMetrics();
  const registry = task.registry;
  return {
    ...task,
    requests: new TalliedCounter({
      name: 'mediagate_http_requests_total',
      help: 'HTTP requests',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'mediagate_http_request_duration_seconds',
      help: 'HTTP request duration',
      labelNames: ['route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    fastPolls: new TalliedCounter({
      name: 'mediagate_http_fast_polls_total',
      help: 'Status polls answered before routing (also in mediagate_http_requests_total)',
      registers: [registry],
    }),
    fastCreates: new TalliedCounter({
      name: 'mediagate_http_fast_creates_total',
      help: 'Creates answered before routing (also in mediagate_http_requests_total)',
      registers: [registry],
    }),
    tasksCreated: new TalliedCounter({ name: 'mediagate_tasks_created_total', help: 'Tasks accepted', labelNames: ['kind', 'model'], registers: [registry] }),
    deprecatedCreates: new Counter({
      name: 'mediagate_deprecated_model_creates_total',
      help: 'Tasks created on a deprecated model (after its deprecated_at), by model',
      labelNames: ['model'],
      registers: [registry],
    }),
    budgetRefusals: new Counter({
      name: 'mediagate_budget_refusals_total',
      help: 'Creates refused because the task did not fit the key budget (402 budget_exceeded), by budget period (day, month, lifetime)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    channels: createChannelMetrics(registry),
  };
}

/** Records one settled task (TaskService `settled`). */
export function observeSettled(metrics: TaskMetrics, task: SettledTask): void {
  const model = task.model ?? 'unknown';
  metrics.tasksSettled.inc({ model, status: task.status, code: task.code ?? '' });
  if (task.queuedMs !== undefined) metrics.queueWait.observe({ model }, Math.max(0, task.queuedMs) / 1000);
  if (task.renderMs !== undefined) metrics.renderTime.observe({ model }, Math.max(0, task.renderMs) / 1000);
  if (task.usage !== undefined) {
    if (task.usage.cost > 0) metrics.costMicro.inc({ model }, task.usage.cost);
    if (task.usage.seconds > 0) metrics.billedSeconds.inc({ model }, task.usage.seconds);
  }
}

/** Sets the tasks gauge from the store's counts; a status with no task is 0, not absent. */
export function setTaskGauge(metrics: TaskMetrics, counts: Readonly<Record<string, number>>): void {
  for (const status of new Set([...GAUGE_STATUSES, ...Object.keys(counts)])) metrics.tasksByStatus.set({ status }, counts[status] ?? 0);
}

/** The tasks gauge read from the store now; during a database outage it keeps its last counts, and the other series are still served. */
export async function refreshTaskGauge(metrics: TaskMetrics, store: Pick<Store, 'countByStatus'>): Promise<void> {
  await store.countByStatus().then(
    (counts) => setTaskGauge(metrics, counts),
    (error: unknown) => {
      if (outageOf(error) === undefined) throw error;
    },
  );
}

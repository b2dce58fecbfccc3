import { createChannelMetrics } from '../channels/metrics.js';
import { registerHealthMetrics } from '../http/metrics/health-metrics.js';
import { startMetricsListener, type MetricsListener } from '../http/metrics/metrics-listener.js';
import { createMetrics, createTaskMetrics, observeSettled, refreshTaskGauge, type Metrics, type TaskMetrics } from '../http/metrics/metrics.js';
import { checkReadiness, readinessAnswer } from '../http/metrics/readiness.js';
import { PROBE_ROUTES } from '../http/routes.js';
import { fieldsOf } from '../config-fields.js';
import type { Floors } from './floors.js';
import { OBSERVABILITY_SLICE } from './slices/observability.js';
import type { Module } from './module.js';
import type { WebhooksModule } from './webhooks.js';

/**
 * Metrics and probes (docs/operations/observability.md). The registry exists before the floors,
 * since the upstream lifecycle records into it; this module counts settled tasks, webhook
 * attempts and the health of the process on it. Traces are not a module: the CLI starts them
 * before anything else loads (OpenTelemetry instruments modules as they are imported).
 */
function observe(metrics: TaskMetrics, floors: Floors, webhooks: WebhooksModule): void {
  registerHealthMetrics(metrics.registry, floors.health);
  floors.service.on('settled', (task) => observeSettled(metrics, task));
  webhooks.observe((outcome) => metrics.webhookDeliveries.inc({ outcome }));
}

/** The API's registry (served at /metrics by the probe routes). */
export function apiMetrics(): Metrics {
  return createMetrics();
}

export function apiObservabilityModule(floors: Floors, metrics: Metrics, webhooks: WebhooksModule): Module {
  observe(metrics, floors, webhooks);
  return { name: 'observability', config: ['metricsToken'], routes: PROBE_ROUTES, loops: [] };
}

/** A worker's registry: the task series and, a worker being where upstream tasks run, the channel series. */
export function workerMetrics(): { metrics: TaskMetrics; channels: ReturnType<typeof createChannelMetrics> } {
  const metrics = createTaskMetrics();
  return { metrics, channels: createChannelMetrics(metrics.registry) };
}

export interface WorkerObservabilityModule extends Module {
  /** The listener's URL once started. */
  readonly url: string | undefined;
}

/** A `mediagate worker`'s /metrics and /readyz on MEDIAGATE_METRICS_PORT: a bare listener (http/metrics/metrics-listener.ts). */
export function workerObservabilityModule(floors: Floors, metrics: TaskMetrics, webhooks: WebhooksModule, port: number): WorkerObservabilityModule {
  observe(metrics, floors, webhooks);
  const { config, store, storage, health } = floors;
  let listener: MetricsListener | undefined;
  return {
    name: 'observability',
    config: [...fieldsOf(OBSERVABILITY_SLICE), 'host'],
    routes: [],
    loops: [],
    get url() {
      return listener?.url;
    },
    async start() {
      listener = await startMetricsListener({
        metrics,
        port,
        host: config.host,
        token: config.metricsToken,
        refresh: () => refreshTaskGauge(metrics, store),
        readiness: async () => readinessAnswer(await checkReadiness({ store, storage, health })),
      });
    },
    close: async () => listener?.close(),
  };
}

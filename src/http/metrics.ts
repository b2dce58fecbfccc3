import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { createChannelMetrics, type ChannelMetrics } from '../channels/metrics.js';

/** Prometheus metrics of one process, served at GET /metrics. */
export interface Metrics {
  readonly registry: Registry;
  readonly requests: Counter<'route' | 'method' | 'status'>;
  readonly duration: Histogram<'route'>;
  /** Status polls answered before routing (http/dispatch.ts); also counted in `requests`. */
  readonly fastPolls: Counter;
  readonly tasksCreated: Counter<'kind' | 'model'>;
  readonly tasksSettled: Counter<'status'>;
  readonly tasksByStatus: Gauge<'status'>;
  /** Per-channel series (src/channels/metrics.ts), recorded by the upstream lifecycle. */
  readonly channels: ChannelMetrics;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'mediagate_' });
  return {
    registry,
    requests: new Counter({ name: 'mediagate_http_requests_total', help: 'HTTP requests', labelNames: ['route', 'method', 'status'], registers: [registry] }),
    duration: new Histogram({
      name: 'mediagate_http_request_duration_seconds',
      help: 'HTTP request duration',
      labelNames: ['route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    fastPolls: new Counter({
      name: 'mediagate_http_fast_polls_total',
      help: 'Status polls answered before routing (also in mediagate_http_requests_total)',
      registers: [registry],
    }),
    tasksCreated: new Counter({ name: 'mediagate_tasks_created_total', help: 'Tasks accepted', labelNames: ['kind', 'model'], registers: [registry] }),
    tasksSettled: new Counter({
      name: 'mediagate_tasks_settled_total',
      help: 'Tasks that reached a final state in this process',
      labelNames: ['status'],
      registers: [registry],
    }),
    tasksByStatus: new Gauge({ name: 'mediagate_tasks', help: 'Tasks in the store by status', labelNames: ['status'], registers: [registry] }),
    channels: createChannelMetrics(registry),
  };
}

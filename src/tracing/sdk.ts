import type { IncomingMessage } from 'node:http';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  isSpanContextValid,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { TracingSettings } from './config.js';
import type { SpanKindName, SpanNotes, TaskSpanAttributes, TracingImpl } from './index.js';

/**
 * The OpenTelemetry side of the hooks (index.ts), loaded only when traces are exported. The
 * SDK reads the rest of its standard variables itself: the endpoint and headers of the OTLP
 * exporter (`OTEL_EXPORTER_OTLP_*`), the batch processor's (`OTEL_BSP_*`), the sampler
 * (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`).
 */

const KINDS: Record<SpanKindName, SpanKind> = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT, producer: SpanKind.PRODUCER };

interface RequestSpan {
  readonly span: Span;
  readonly context: Context;
  readonly method: string;
}

/** An error as a span status: its name and code only (a message may hold a URL with a signature). */
function errorStatus(error: unknown): string {
  if (!(error instanceof Error)) return 'error';
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? `${error.name} ${code}` : error.name;
}

function taskAttributes(attributes: TaskSpanAttributes): Attributes {
  const out: Attributes = { 'mediagate.task_id': attributes.taskId };
  if (attributes.model !== undefined) out['mediagate.model'] = attributes.model;
  if (attributes.channel !== undefined) out['mediagate.channel'] = attributes.channel;
  if (attributes.keyId !== undefined) out['mediagate.key_id'] = attributes.keyId;
  for (const [name, value] of Object.entries(attributes.extra ?? {})) if (value !== undefined) out[name] = value;
  return out;
}

export function createTracing(settings: TracingSettings, processRole: 'api' | 'worker'): TracingImpl {
  const exporter = settings.protocol === 'http/json' ? new JsonExporter() : new ProtobufExporter();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName, 'mediagate.process': processRole }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  const tracer = trace.getTracer('mediagate');
  const requests = new WeakMap<IncomingMessage, RequestSpan>();

  const parentOf = (traceparent: string | null | undefined): Context | undefined =>
    traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : undefined;

  return {
    httpRequest(req, res) {
      const method = req.method ?? 'GET';
      // A client's `traceparent` (and `tracestate`) continues its trace.
      const parent = propagation.extract(ROOT_CONTEXT, req.headers);
      const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
      requests.set(req, { span, context: trace.setSpan(parent, span), method });
      let ended = false;
      const end = (): void => {
        if (ended) return;
        ended = true;
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      };
      res.once('finish', end);
      res.once('close', end);
    },
    httpRoute(req, route) {
      const found = requests.get(req);
      if (!found) return;
      found.span.setAttribute('http.route', route);
      found.span.updateName(`${found.method} ${route}`);
    },
    inRequest(req, run) {
      const found = requests.get(req);
      return found ? context.with(found.context, run) : run();
    },
    traceparent() {
      const carrier: Record<string, string> = {};
      propagation.inject(context.active(), carrier);
      return carrier['traceparent'];
    },
    async taskSpan(name, traceparent, attributes, kind, run) {
      const stored = parentOf(traceparent);
      const active = trace.getActiveSpan()?.spanContext();
      // Under the task's own trace. Whatever runs now in another trace (the request whose create
      // woke the worker, a redeliver request) is not this span's cause: a link, not a parent.
      const activeTrace = active && isSpanContextValid(active) ? active : undefined;
      const links: Link[] = stored && activeTrace && activeTrace.traceId !== trace.getSpanContext(stored)?.traceId ? [{ context: activeTrace }] : [];
      const span = tracer.startSpan(name, { kind: KINDS[kind], attributes: taskAttributes(attributes), links }, stored ?? context.active());
      const notes: SpanNotes = {
        set(key, value) {
          if (value !== undefined) span.setAttribute(key, value);
        },
      };
      try {
        return await context.with(trace.setSpan(stored ?? context.active(), span), () => run(notes));
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: errorStatus(error) });
        throw error;
      } finally {
        span.end();
      }
    },
    logFields() {
      const active = trace.getActiveSpan()?.spanContext();
      return active && isSpanContextValid(active) ? { trace_id: active.traceId, span_id: active.spanId } : undefined;
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}

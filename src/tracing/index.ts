import type { IncomingMessage, ServerResponse } from 'node:http';
import { tracingSettings, type Env } from './config.js';

/**
 * Traces of a task's life (docs/operations/observability.md, "Traces"): the hooks the rest of
 * the code calls. Until `startTracing` found OpenTelemetry's variables set, every hook is a
 * check of one variable and a direct call: the SDK (sdk.ts) is imported only then, so a process
 * without them loads none of it and its hot path pays nothing.
 *
 * A task's trace context (a W3C `traceparent`) is kept on its row (`tasks.trace_context`): the
 * create stores the context of its request, and whatever process works on the task later
 * (render, upstream submit, polls, output copy, the charge, webhook deliveries) starts its spans
 * under it, so they join the client's trace from any process.
 */

/** What every span of a task's life says about it: never a key, only the key's id. */
export interface TaskSpanAttributes {
  readonly taskId: string;
  readonly model?: string;
  readonly channel?: string;
  readonly keyId?: string;
  /** More attributes of this span (numbers, short strings: no secret, no URL with a signature). */
  readonly extra?: Readonly<Record<string, string | number | boolean | undefined>>;
}

export type SpanKindName = 'internal' | 'client' | 'producer';

/** A task's stored trace context, read when a span needs it (the store is read only with tracing on). */
export type TraceContextSource = string | null | undefined | (() => Promise<string | null | undefined>);

/** What the SDK side (sdk.ts) implements. */
export interface TracingImpl {
  httpRequest(req: IncomingMessage, res: ServerResponse): void;
  httpRoute(req: IncomingMessage, route: string): void;
  inRequest<T>(req: IncomingMessage, run: () => T): T;
  traceparent(): string | undefined;
  taskSpan<T>(
    name: string,
    parent: string | null | undefined,
    attributes: TaskSpanAttributes,
    kind: SpanKindName,
    run: (span: SpanNotes) => Promise<T>,
  ): Promise<T>;
  logFields(): { trace_id: string; span_id: string } | undefined;
  shutdown(): Promise<void>;
}

/** What a hook's callback may add to its span once it knows more (a provider's request id, a status). */
export interface SpanNotes {
  set(name: string, value: string | number | boolean | undefined): void;
}

const NO_NOTES: SpanNotes = { set() {} };

let impl: TracingImpl | undefined;

/**
 * Starts exporting traces when OpenTelemetry's variables ask for it (config.ts); false when they
 * do not (nothing is loaded). Once per process, before it serves or works.
 */
export async function startTracing(env: Env = process.env, processRole: 'api' | 'worker' = 'api'): Promise<boolean> {
  if (impl) return true;
  const settings = tracingSettings(env);
  if (!settings) return false;
  const { createTracing } = await import('./sdk.js');
  impl = createTracing(settings, processRole);
  return true;
}

/** Flushes the spans still queued and stops exporting (at shutdown). */
export async function stopTracing(): Promise<void> {
  const current = impl;
  impl = undefined;
  await current?.shutdown();
}

export const tracingEnabled = (): boolean => impl !== undefined;

/** The HTTP server span of a request (the server's request listener, once per request). */
export function traceHttpRequest(req: IncomingMessage, res: ServerResponse): void {
  impl?.httpRequest(req, res);
}

/** The route template the request matched (`http.route`, and the span's name). */
export function traceHttpRoute(req: IncomingMessage, route: string): void {
  impl?.httpRoute(req, route);
}

/** Runs a handler in its request's span, so what it does (a create, log lines) knows the trace. */
export function inRequestTrace<T>(req: IncomingMessage, run: () => T): T {
  return impl ? impl.inRequest(req, run) : run();
}

/** The active trace context as a W3C `traceparent`, for a new task's row; undefined without one. */
export function currentTraceparent(): string | undefined {
  return impl?.traceparent();
}

/**
 * Runs `run` in a span of the task's trace (its stored context is the parent), with the task's
 * attributes; the span records a throw as an error. Without tracing: `run` alone.
 */
export async function inTaskSpan<T>(
  name: string,
  context: TraceContextSource,
  attributes: TaskSpanAttributes,
  run: (span: SpanNotes) => Promise<T>,
  kind: SpanKindName = 'internal',
): Promise<T> {
  if (!impl) return run(NO_NOTES);
  const parent = typeof context === 'function' ? await context().catch(() => undefined) : context;
  return impl.taskSpan(name, parent, attributes, kind, run);
}

/** Whether a span is active here (a task's later span then goes under it). */
export function traceActive(): boolean {
  return impl?.logFields() !== undefined;
}

/** `trace_id` and `span_id` of the active span, for log lines; undefined without one. */
export function traceLogFields(): { trace_id: string; span_id: string } | undefined {
  return impl?.logFields();
}

import { AbortError, APIError, ConnectionError, RateLimitError, ServerError, StreamError, apiErrorFrom } from './errors.js';
import { fetchFailure, parseBody, sleep, type HttpCore } from './http.js';
import { readServerSentEvents } from './sse.js';
import type { EventsOptions } from './types.js';

/** Reconnection delay when the server sent no `retry:` field. */
const DEFAULT_RECONNECT_MS = 1_000;
const MAX_RECONNECT_MS = 15_000;
/** Connections in a row that may fail (no event received) before the stream gives up. */
const DEFAULT_MAX_RECONNECTS = 5;
/** The server sends a comment at least every 15 s (decisions §8.3); four missed ones mean a dead connection. */
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/**
 * A stream the server ended cleanly after this long is not a failure, even without an event:
 * servers end streams at a maximum lifetime (and when the task stays unchanged, a resumed stream
 * sends nothing), and the client resumes with Last-Event-ID.
 */
const HEALTHY_STREAM_MS = 10_000;

export interface TaskStreamSpec<T> {
  /** `/v1/.../{id}/events` */
  readonly path: string;
  /** The task in an event's `data` (the video object; the image envelope's `data`); undefined when it is not one. */
  readonly parse: (data: unknown) => T | undefined;
  readonly isFinal: (task: T) => boolean;
}

/**
 * The states of one task as they change, from `GET .../{id}/events` (decisions §8.3): the first
 * is the current state, the last a final one. A dropped connection is reopened with `Last-Event-ID`, so
 * no state is missed; `lastEventId` is where a later stream could resume.
 */
export class TaskEventStream<T> implements AsyncIterable<T> {
  readonly #http: HttpCore;
  readonly #spec: TaskStreamSpec<T>;
  readonly #options: EventsOptions;
  #lastEventId: string;

  constructor(http: HttpCore, spec: TaskStreamSpec<T>, options: EventsOptions = {}) {
    this.#http = http;
    this.#spec = spec;
    this.#options = options;
    this.#lastEventId = options.lastEventId ?? '';
  }

  /** The id of the last event received ('' before the first). */
  get lastEventId(): string {
    return this.#lastEventId;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    const signal = this.#options.signal;
    const maxReconnects = this.#options.maxReconnects ?? DEFAULT_MAX_RECONNECTS;
    let failures = 0;
    let reconnectMs = this.#options.reconnectDelay ?? DEFAULT_RECONNECT_MS;
    let lastError: unknown;
    for (;;) {
      let received = false;
      const started = Date.now();
      try {
        for await (const task of this.#connect((ms) => (reconnectMs = ms))) {
          received = true;
          failures = 0;
          yield task;
          if (this.#spec.isFinal(task)) return;
        }
        lastError = new StreamError('The event stream ended before the task reached a final state.');
        if (Date.now() - started >= HEALTHY_STREAM_MS) {
          received = true;
          failures = 0;
        }
      } catch (error) {
        if (error instanceof AbortError || signal?.aborted) throw new AbortError('The event stream was aborted.', { cause: signal?.reason ?? error });
        if (!transient(error)) throw error;
        lastError = error;
      }
      if (!received) failures++;
      if (failures > maxReconnects) {
        const cause = lastError instanceof Error ? `: ${lastError.message}` : '';
        throw new StreamError(`The event stream failed ${failures} times in a row${cause}`, { cause: lastError });
      }
      const backoff = Math.min(reconnectMs * 2 ** Math.max(0, failures - 1), MAX_RECONNECT_MS);
      await sleep(backoff, signal);
    }
  }

  /** One connection: yields the tasks of its events until the stream ends or breaks. */
  async *#connect(onRetry: (ms: number) => void): AsyncGenerator<T, void, undefined> {
    const signal = this.#options.signal;
    if (signal?.aborted) throw new AbortError('The event stream was aborted.', { cause: signal.reason });
    const spec = { method: 'GET' as const, path: this.#spec.path, idempotent: true };
    const headers = this.#http.headers(spec, { ...(this.#options.headers ? { headers: this.#options.headers } : {}) }, 'text/event-stream');
    headers['cache-control'] = 'no-cache';
    if (this.#lastEventId !== '') headers['last-event-id'] = this.#lastEventId;

    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (ms: number): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, ms);
    };
    const idle = this.#options.idleTimeout ?? DEFAULT_IDLE_TIMEOUT_MS;
    try {
      arm(this.#http.timeout);
      let response: Response;
      try {
        response = await this.#http.fetch(this.#http.url(spec), { method: 'GET', headers, signal: controller.signal });
      } catch (error) {
        throw timedOut
          ? new ConnectionError(`No response from ${this.#http.baseURL} within ${this.#http.timeout} ms.`, { cause: error })
          : fetchFailure(error, this.#http.baseURL, signal);
      }
      if (response.status < 200 || response.status >= 300) {
        const body = parseBody(await response.text().catch(() => ''));
        throw apiErrorFrom(response.status, response.headers, body);
      }
      const type = response.headers.get('content-type') ?? '';
      if (!type.toLowerCase().startsWith('text/event-stream') || !response.body) {
        await response.body?.cancel().catch(() => undefined);
        throw new StreamError(`Expected text/event-stream from ${this.#spec.path}; got '${type}'.`);
      }
      arm(idle);
      const touched = response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, output) {
            arm(idle);
            output.enqueue(chunk);
          },
        }),
      );
      try {
        const events = readServerSentEvents(touched, { lastEventId: this.#lastEventId, onRetry });
        for await (const event of events) {
          this.#lastEventId = event.id;
          if (event.event !== 'task' && event.event !== 'message') continue;
          let data: unknown;
          try {
            data = JSON.parse(event.data) as unknown;
          } catch {
            throw new StreamError(`An event's data is not JSON: ${event.data.slice(0, 200)}`);
          }
          const task = this.#spec.parse(data);
          if (task === undefined) throw new StreamError(`An event's data is not a task: ${event.data.slice(0, 200)}`);
          yield task;
        }
      } catch (error) {
        if (error instanceof StreamError || error instanceof APIError) throw error;
        if (signal?.aborted) throw new AbortError('The event stream was aborted.', { cause: signal.reason });
        throw new ConnectionError(timedOut ? `No data on the event stream for ${idle} ms.` : 'The event stream broke.', { cause: error });
      }
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

/** Failures worth reconnecting for: the connection, the server's 5xx and 429. A malformed stream is not one. */
function transient(error: unknown): boolean {
  if (error instanceof StreamError) return false;
  return (
    error instanceof ConnectionError || error instanceof ServerError || error instanceof RateLimitError || (error instanceof APIError && error.status === 408)
  );
}

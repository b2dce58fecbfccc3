import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Loop } from '../../loop.js';
import { errors } from '../../errors.js';
import { bearerToken } from '../keys/auth.js';
import type { Task, TaskStatus } from '../../store/records.js';
import type { Family } from '../../wire/envelopes.js';
import { pathParam, type DepsOf, type Handler } from '../route.js';
import { ofFamily, taskBody } from './tasks.js';

/** The tasks module's part an event stream reads: the task feed, the service, its caps and the presenter's parts. */
type EventDeps = DepsOf<'feed' | 'service' | 'sseKeepAliveMs', 'urlFor' | 'currency' | 'streams' | 'closing'>;

const FINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

/** A client's `Last-Event-ID`: one of our ids (a task's version), else ignored. */
export function parseLastEventId(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\d{1,15}$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

/**
 * Headers of an event stream. `no-transform` and `X-Accel-Buffering: no` keep proxies (nginx,
 * CDNs) from buffering or compressing it, which would hold events back.
 */
const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
  connection: 'keep-alive',
};

/**
 * `GET /v1/video/generations/{task_id}/events`, `GET /v1/images/generations/async/{task_id}/events`
 * (decisions 8.3): one `task` event per change of status or progress, `data` the status poll's
 * body, `id` the task's version (bumped by every transition, so it orders events whichever
 * process made them). The first event is the current state; the stream ends after a final one.
 */
export function streamTaskEvents(family: Family): (deps: EventDeps) => Handler {
  return (deps) => {
    const body = taskBody(deps, family);
    const { feed, service, sseKeepAliveMs } = deps.ctx;
    return async (request, reply) => {
      const id = pathParam(request, 'task_id');
      const owner = request.owner;
      // A slot of the key's streams first (429 past its cap, in the family's envelope); `end` is
      // set once the stream is open: the slot's lifetime or a revoked key ends it.
      // An end asked for before the stream is open (the key revoked, or the lifetime over, during
      // the first read) is remembered and carried out as soon as it is.
      let endedEarly = false;
      let endStream: () => void = () => {
        endedEarly = true;
      };
      const token = bearerToken(request.headers.authorization);
      const release = deps.streams.open(owner, typeof token === 'string' ? token : '', () => endStream());
      // Subscribed before the first read, so a change between the read and the subscription is not lost.
      const pending: Task[] = [];
      let deliver: (task: Task) => void = (task) => pending.push(task);
      const unsubscribe = feed.subscribe(owner, id, (task) => deliver(task));
      const giveUp = (): void => {
        unsubscribe();
        release();
      };
      let task: Task | undefined;
      try {
        task = ofFamily(await service.get(owner, id), family);
      } catch (error) {
        giveUp();
        throw error;
      }
      if (task === undefined) {
        giveUp();
        throw errors.taskNotFound(id);
      }

      reply.hijack();
      const res = reply.raw;
      for (const [name, value] of Object.entries(STREAM_HEADERS)) reply.header(name, value);
      res.writeHead(200, headersOf(reply.getHeaders()));
      if (request.method === 'HEAD' || deps.closing.aborted) {
        giveUp();
        res.end();
        return;
      }
      const stream = new TaskStream(res, body, parseLastEventId(request.headers['last-event-id']));
      const keepAlive = new Loop({
        name: 'keep-alive',
        immediate: false,
        intervalMs: sseKeepAliveMs,
        turn: () => void stream.comment('keep-alive'),
        onError: () => undefined,
      }).start();
      const stop = (): void => {
        void keepAlive.stop();
        giveUp();
        deps.closing.removeEventListener('abort', end);
        deliver = () => undefined;
      };
      const end = (): void => {
        stop();
        if (!res.writableEnded) res.end();
      };
      res.on('close', stop);
      // A client gone during the first read has closed already: no 'close' is coming.
      if (res.destroyed || request.raw.destroyed) {
        stop();
        return;
      }
      deps.closing.addEventListener('abort', end, { once: true });
      endStream = end;
      if (endedEarly) {
        end();
        return;
      }
      // Sends the headers now: a proxy or client sees the stream open before the first change.
      stream.comment('stream');
      deliver = (next) => {
        if (stream.send(next)) end();
      };
      if (stream.send(task)) {
        end();
        return;
      }
      for (const next of pending.splice(0)) deliver(next);
    };
  };
}

/** The headers set so far (default headers, CORS) as node:http takes them. */
function headersOf(headers: Record<string, string | number | string[] | undefined>): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = value;
  return out;
}

/** One open stream: which state it sent last, and the SSE framing. */
class TaskStream {
  private version: number;
  private status: TaskStatus | undefined;
  private progress: number | null | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly body: (task: Task) => object,
    lastEventId: number | undefined,
  ) {
    this.version = lastEventId ?? -1;
  }

  /**
   * Sends `task` if it is newer than what the client has and differs in status or progress
   * (a takeover bumps the version without a visible change). True when the task is final and
   * the client has it: the stream should end.
   */
  send(task: Task): boolean {
    if (task.version > this.version) {
      const changed = task.status !== this.status || task.progress !== this.progress;
      this.version = task.version;
      if (changed) {
        this.status = task.status;
        this.progress = task.progress;
        this.write(`id: ${task.version}\nevent: task\ndata: ${JSON.stringify(this.body(task))}\n\n`);
      }
    }
    return FINAL.has(task.status) && task.version <= this.version;
  }

  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  private write(text: string): void {
    if (!this.res.writableEnded && !this.res.destroyed) this.res.write(text);
  }
}

/**
 * A real HTTP server (node:http, ephemeral port) that speaks the task operations (docs/interface.md, "Additions beyond the seed") as a
 * client observes it: cancel, list (newest first, `after`, `has_more`, `last_id`, filters), task
 * events over `text/event-stream` (the first event the current state, one per change, heartbeat
 * comments, `id` per event, `Last-Event-ID` resume, end after a final state), idempotent creates
 * (replay with `Idempotent-Replayed: true`, 422 `idempotency_key_reused`, 409
 * `idempotency_key_in_use`) and webhook endpoints, in both families' envelopes.
 *
 * Tasks change only when a test says so (`advance`), and faults are injected on request
 * (`faults`), so the SDK's behaviour is observable step by step. Specs receive a `TaskOperationsTarget`
 * (`url`, `apiKey`); an end-to-end spec can hand them the real server instead where it uses no
 * stub control.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Task } from '../../src/store/records.js';
import { IMAGE_STATUS_WORDS, imageCreated, imageTaskData, taskBody } from '../../src/wire/task-bodies.js';

export interface TaskOperationsTarget {
  readonly url: string;
  readonly apiKey: string;
}

type Family = 'video' | 'image';
type Status = 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';

interface StubTask {
  readonly id: string;
  readonly family: Family;
  readonly model: string;
  readonly key: string;
  readonly createdAt: number;
  status: Status;
  progress: number | null;
  completedAt: number | null;
  /** Every state sent on the events stream, in order; an event's id is its index + 1. */
  readonly history: string[];
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** Faults the next requests meet; each counter is spent by one request. */
export interface Faults {
  /** Creates that are carried out (the task exists) and then answered 503, as if the response was lost. */
  createThen503: number;
  /** Creates whose connection is destroyed after the task was made. */
  createThenDrop: number;
  /** Event streams that are cut after this many events (one entry per connection). */
  dropStreamAfter: number[];
  /** Creates with a key answered 409 `idempotency_key_in_use` (the first request still running). */
  createInUse: number;
  /** The events route answers 404 `not_found` (a server without live status). */
  eventsUnsupported: boolean;
  /** Event streams answered 503 before any event (one per count). */
  events503: number;
}

const IMAGE_STATUS: Readonly<Record<Status, string>> = IMAGE_STATUS_WORDS;
const FINAL = new Set<Status>(['completed', 'failed', 'cancelled']);

export class TaskOperationsStub implements TaskOperationsTarget {
  readonly apiKey = `mg_${randomBytes(8).toString('hex')}`;
  readonly otherKey = `mg_${randomBytes(8).toString('hex')}`;
  readonly requests: RecordedRequest[] = [];
  readonly faults: Faults = { createThen503: 0, createThenDrop: 0, dropStreamAfter: [], eventsUnsupported: false, events503: 0, createInUse: 0 };
  readonly webhooks = new Map<string, { id: string; url: string; events: string[]; secret: string; key: string }>();
  /** Heartbeat interval of event streams, in ms. */
  heartbeatMs = 50;
  url = '';
  readonly #tasks: StubTask[] = [];
  readonly #idempotency = new Map<string, { hash: string; taskId: string | null }>();
  readonly #listeners = new Map<string, Set<() => void>>();
  readonly #server = createServer((req, res) => void this.#handle(req, res));
  #counter = 0;

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Adds a task directly (for list specs); returns its id. */
  seed(family: Family, model: string, status: Status = 'queued', key = this.apiKey): string {
    return this.#create(family, model, key, status).id;
  }

  tasks(family?: Family): readonly StubTask[] {
    return this.#tasks.filter((task) => family === undefined || task.family === family);
  }

  /** Changes a task and notifies its open streams. */
  advance(id: string, change: { status?: Status; progress?: number }): void {
    const task = this.#tasks.find((candidate) => candidate.id === id);
    if (!task) throw new Error(`no task ${id}`);
    if (change.status !== undefined) task.status = change.status;
    if (change.progress !== undefined) task.progress = change.progress;
    if (FINAL.has(task.status)) task.completedAt = Math.floor(Date.now() / 1000);
    if (task.status === 'completed') task.progress = 100;
    task.history.push(JSON.stringify(this.#view(task)));
    for (const listener of this.#listeners.get(id) ?? []) listener();
  }

  /** Resolves once `count` event-stream connections for the task are open. */
  async streamsOpen(id: string, count = 1, deadlineMs = 5_000): Promise<void> {
    const until = Date.now() + deadlineMs;
    while ((this.#listeners.get(id)?.size ?? 0) < count) {
      if (Date.now() > until) throw new Error(`no open stream for ${id}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  requestsTo(pattern: RegExp, method?: string): RecordedRequest[] {
    return this.requests.filter((request) => pattern.test(request.path) && (method === undefined || request.method === method));
  }

  #create(family: Family, model: string, key: string, status: Status = 'queued'): StubTask {
    this.#counter += 1;
    const task: StubTask = {
      id: `${family === 'video' ? 'vid' : 'img'}_${String(this.#counter).padStart(6, '0')}${randomBytes(4).toString('hex')}`,
      family,
      model,
      key,
      // Distinct, increasing creation times: newest first is then unambiguous.
      createdAt: 1_700_000_000 + this.#counter,
      status,
      progress: status === 'completed' ? 100 : null,
      completedAt: FINAL.has(status) ? 1_700_000_000 + this.#counter + 5 : null,
      history: [],
    };
    task.history.push(JSON.stringify(this.#view(task)));
    this.#tasks.push(task);
    return task;
  }

  /** The stub's task as a store record, so that its bodies come from the server's own presenter. */
  #record(task: StubTask): Task {
    const failed = task.status === 'failed';
    return {
      id: task.id,
      kind: task.family,
      model: task.model,
      owner: task.key,
      status: task.status,
      progress: task.progress,
      createdAt: task.createdAt * 1000,
      startedAt: task.status === 'queued' ? null : task.createdAt * 1000,
      completedAt: task.completedAt === null ? null : task.completedAt * 1000,
      error: failed ? { type: 'generation_error', code: 'generation_failed', message: 'The render failed.', param: '' } : null,
      outputs:
        task.status === 'completed'
          ? [{ type: task.family, key: `${task.id}.${task.family === 'video' ? 'mp4' : 'png'}`, contentType: 'application/octet-stream' }]
          : [],
      attempt: 1,
      version: task.history.length + 1,
      usage: task.status === 'completed' || failed || task.status === 'cancelled' ? { seconds: 0, images: 0, cost: 0 } : null,
    };
  }

  readonly #urlFor = (key: string): string => `${this.url}/files/${key}`;

  /** The task exactly as a status poll returns it (the video object; the image envelope). */
  #view(task: StubTask): object {
    return taskBody(this.#record(task), this.#urlFor, 'USD');
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://stub');
    this.requests.push({ method: req.method ?? '', path: `${url.pathname}${url.search}`, headers: req.headers, body });
    const family: Family = url.pathname.startsWith('/v1/images') ? 'image' : 'video';
    const fail = (status: number, code: string, param = '', extra: Record<string, string> = {}): void => {
      const message = `stub: ${code}`;
      const payload =
        family === 'image' || url.pathname.startsWith('/v1/images')
          ? { code, message, data: null }
          : { error: { type: 'invalid_request_error', code, message, param } };
      res.writeHead(status, { 'content-type': 'application/json', ...extra }).end(JSON.stringify(payload));
    };
    const ok = (payload: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(payload));
    };

    const auth = /^bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const key = auth === this.apiKey || auth === this.otherKey ? auth : undefined;
    if (key === undefined) return fail(401, 'invalid_api_key', 'Authorization');

    if (url.pathname === '/v1/webhooks') {
      if (req.method === 'POST') {
        const params = JSON.parse(body) as { url: string; events?: string[] };
        if (!params.url.startsWith('https://')) return fail(400, 'invalid_parameter', 'url');
        const id = `wh_${randomBytes(6).toString('hex')}`;
        const endpoint = {
          id,
          url: params.url,
          events: params.events ?? ['video.completed', 'video.failed', 'video.cancelled', 'image.completed', 'image.failed', 'image.cancelled'],
          secret: `whsec_${randomBytes(32).toString('base64')}`,
          key,
        };
        this.webhooks.set(id, endpoint);
        return ok({ id, object: 'webhook', url: endpoint.url, events: endpoint.events, created_at: Math.floor(Date.now() / 1000), secret: endpoint.secret });
      }
      if (req.method === 'GET') {
        return ok({
          object: 'list',
          data: [...this.webhooks.values()]
            .filter((item) => item.key === key)
            .map(({ id, url: target, events }) => ({ id, object: 'webhook', url: target, events, created_at: 0 })),
        });
      }
      return fail(405, 'method_not_allowed');
    }
    const webhook = /^\/v1\/webhooks\/([^/]+)$/.exec(url.pathname);
    if (webhook && req.method === 'DELETE') {
      const found = this.webhooks.get(decodeURIComponent(webhook[1] ?? ''));
      if (!found || found.key !== key) return fail(404, 'webhook_not_found', 'webhook_id');
      this.webhooks.delete(found.id);
      return ok({ id: found.id, object: 'webhook', deleted: true });
    }

    const base = family === 'video' ? '/v1/video/generations' : '/v1/images/generations/async';
    if (url.pathname === base && req.method === 'POST') return this.#createRoute(family, key, body, req, res, ok, fail);
    if (url.pathname === base && req.method === 'GET') return this.#listRoute(family, key, url, ok, fail);
    const match = new RegExp(`^${base}/([^/]+)(/cancel|/events)?$`).exec(url.pathname);
    if (!match) return fail(404, 'not_found');
    const task = this.#tasks.find((candidate) => candidate.id === decodeURIComponent(match[1] ?? '') && candidate.family === family && candidate.key === key);
    const tail = match[2] ?? '';
    if (tail === '/events') {
      if (this.faults.eventsUnsupported) return fail(404, 'not_found');
      if (!task) return fail(404, 'task_not_found', 'task_id');
      if (this.faults.events503 > 0) {
        this.faults.events503 -= 1;
        return fail(503, 'internal_error');
      }
      return this.#eventsRoute(task, req, res);
    }
    if (!task) return fail(404, 'task_not_found', 'task_id');
    if (tail === '/cancel' && req.method === 'POST') {
      if (task.status === 'completed' || task.status === 'failed') return fail(409, 'task_not_cancellable', 'task_id');
      if (task.status !== 'cancelled') this.advance(task.id, { status: 'cancelled' });
      return ok(this.#view(task));
    }
    if (tail === '' && req.method === 'GET') return ok(this.#view(task));
    return fail(405, 'method_not_allowed');
  }

  #createRoute(
    family: Family,
    key: string,
    body: string,
    req: IncomingMessage,
    res: ServerResponse,
    ok: (payload: unknown, headers?: Record<string, string>) => void,
    fail: (status: number, code: string, param?: string) => void,
  ): void {
    let params: { model?: unknown; prompt?: unknown };
    try {
      params = JSON.parse(body) as { model?: unknown; prompt?: unknown };
    } catch {
      return fail(400, 'invalid_json', 'body');
    }
    if (typeof params.model !== 'string') return fail(400, 'missing_parameter', 'model');
    const idempotencyKey = req.headers['idempotency-key'];
    const slot = typeof idempotencyKey === 'string' ? `${key}:${family}:${idempotencyKey}` : undefined;
    const hash = createHash('sha256').update(body).digest('hex');
    if (slot !== undefined) {
      if (!/^[\x20-\x7e]{1,255}$/.test(String(idempotencyKey))) return fail(400, 'invalid_parameter', 'Idempotency-Key');
      if (this.faults.createInUse > 0) {
        this.faults.createInUse -= 1;
        return fail(409, 'idempotency_key_in_use', 'Idempotency-Key');
      }
      const seen = this.#idempotency.get(slot);
      if (seen) {
        if (seen.hash !== hash) return fail(422, 'idempotency_key_reused', 'Idempotency-Key');
        const original = this.#tasks.find((task) => task.id === seen.taskId);
        if (!original) return fail(409, 'idempotency_key_in_use', 'Idempotency-Key');
        return ok(this.#createdView(original), { 'idempotent-replayed': 'true' });
      }
    }
    const task = this.#create(family, params.model, key);
    if (slot !== undefined) this.#idempotency.set(slot, { hash, taskId: task.id });
    if (this.faults.createThenDrop > 0) {
      this.faults.createThenDrop -= 1;
      res.socket?.destroy();
      return;
    }
    if (this.faults.createThen503 > 0) {
      this.faults.createThen503 -= 1;
      return fail(503, 'internal_error');
    }
    ok(this.#createdView(task));
  }

  #createdView(task: StubTask): unknown {
    return task.family === 'video' ? this.#view(task) : imageCreated(this.#record(task));
  }

  #listRoute(family: Family, key: string, url: URL, ok: (payload: unknown) => void, fail: (status: number, code: string, param?: string) => void): void {
    const limitText = url.searchParams.get('limit');
    const limit = limitText === null ? 20 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) return fail(400, 'invalid_parameter', 'limit');
    const status = url.searchParams.get('status');
    const statusOf = (task: StubTask): string => (family === 'video' ? task.status : IMAGE_STATUS[task.status]);
    const known = family === 'video' ? ['queued', 'processing', 'completed', 'failed', 'cancelled'] : Object.values(IMAGE_STATUS);
    if (status !== null && !known.includes(status)) return fail(400, 'unsupported_value', 'status');
    const model = url.searchParams.get('model');
    let items = this.#tasks
      .filter(
        (task) => task.family === family && task.key === key && (status === null || statusOf(task) === status) && (model === null || task.model === model),
      )
      .sort((a, b) => b.createdAt - a.createdAt);
    const after = url.searchParams.get('after');
    if (after !== null) {
      const anchor = this.#tasks.find((task) => task.id === after && task.family === family && task.key === key);
      if (!anchor) return fail(400, 'invalid_parameter', 'after');
      items = items.filter((task) => task.createdAt < anchor.createdAt);
    }
    const page = items.slice(0, limit);
    const hasMore = items.length > limit;
    const lastId = page.at(-1)?.id ?? null;
    if (family === 'video') return ok({ object: 'list', data: page.map((task) => this.#view(task)), has_more: hasMore, last_id: lastId });
    ok({
      code: 'success',
      message: '',
      data: { items: page.map((task) => imageTaskData(this.#record(task), this.#urlFor, 'USD')), has_more: hasMore, last_id: lastId },
    });
  }

  #eventsRoute(task: StubTask, req: IncomingMessage, res: ServerResponse): void {
    const dropAfter = this.faults.dropStreamAfter.shift();
    const lastEventId = req.headers['last-event-id'];
    // Without Last-Event-ID the first event is the current state; with it, every event after it.
    let next = typeof lastEventId === 'string' && /^\d+$/.test(lastEventId) ? Number(lastEventId) : task.history.length - 1;
    let sent = 0;
    // CRLF line ends, a BOM, a retry field and a comment: the parser must take them all.
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.write('\uFEFF: stream open\r\nretry: 20\r\n\r\n');
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), this.heartbeatMs);
    const listeners = this.#listeners.get(task.id) ?? new Set<() => void>();
    this.#listeners.set(task.id, listeners);
    const stop = (): void => {
      clearInterval(heartbeat);
      listeners.delete(flush);
    };
    const flush = (): void => {
      while (next < task.history.length) {
        if (dropAfter !== undefined && sent >= dropAfter) {
          stop();
          res.socket?.destroy();
          return;
        }
        const data = task.history[next] ?? '';
        next += 1;
        sent += 1;
        // The data split over two `data:` lines: a multi-line field joined by "\n" is the same JSON.
        const half = data.indexOf(',');
        res.write(`event: task\nid: ${next}\ndata: ${data.slice(0, half + 1)}\ndata: ${data.slice(half + 1)}\n\n`);
      }
      if (FINAL.has(task.status)) {
        stop();
        res.end();
      }
    };
    listeners.add(flush);
    res.on('close', stop);
    flush();
  }
}

export async function startTaskOperationsStub(): Promise<TaskOperationsStub> {
  return new TaskOperationsStub().start();
}

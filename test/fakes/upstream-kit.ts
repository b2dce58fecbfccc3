import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * What the upstream fakes (test/fakes/<protocol>.ts) share: a real HTTP server on an ephemeral
 * port, a task book whose state is computed from each task's creation time and an injectable
 * clock (no timer per task, so 10,000 tasks of 60 s cost a Map), failure modes chosen per task by
 * markers in the prompt or per request by injected faults, counters, and output files served
 * from the fake's own origin with real MP4/PNG bytes.
 *
 * Glossary
 * - plan: what a task will do (queue time, run time, outcome, output), fixed at creation.
 * - marker: `[fake:<mode>]` anywhere in the prompt selects a failure mode for that task, so an
 *   end-to-end test through the real service picks a mode per task without touching the fake.
 * - fault: a one-off answer injected on the next matching request(s): 429 (with or without
 *   Retry-After), 500, or a lost answer (the request is handled, then the socket destroyed).
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/upstream/', import.meta.url));
/** A real 64x64, 1 s H.264 MP4 and a real 16x16 PNG, made once with ffmpeg. */
export const TINY_MP4 = readFileSync(`${FIXTURES}tiny.mp4`);
export const TINY_PNG = readFileSync(`${FIXTURES}tiny.png`);
/** An output that claims to be a video (served as video/mp4) but is an HTML error page. */
export const NOT_A_VIDEO = Buffer.from('<html><body>AccessDenied</body></html>');

export type Clock = () => number;

export type TaskOutcome = 'succeed' | 'fail' | 'moderation' | 'stuck';
export type OutputKind = 'mp4' | 'png' | 'not-media' | 'missing';

export interface TaskPlan {
  readonly queuedMs: number;
  readonly runMs: number;
  /** `moderation` fails the task late: after it ran, as moderation of the output does. */
  readonly outcome: TaskOutcome;
  readonly output: OutputKind;
  /** The output URL stops working this long after the task finished. */
  readonly outputTtlMs: number;
  /** The fake forgets the task right after accepting it (polls answer "unknown id"). */
  readonly forgotten: boolean;
  /** Create the task, then destroy the connection instead of answering. */
  readonly loseAnswer: boolean;
  /**
   * Refuse the submission with the upstream's own error: input moderation, an invalid parameter,
   * its business rate limit (inside HTTP 200 where the protocol does that), or an exhausted balance.
   */
  readonly refuse: 'none' | 'moderation' | 'invalid' | 'rate-limit' | 'quota';
  /** Serve the output file slowly, in small chunks (`[fake:trickle]`): a copy in progress lasts seconds. */
  readonly trickle: boolean;
}

export type Phase = 'queued' | 'running' | 'succeeded' | 'failed' | 'moderated' | 'cancelled';

export interface FakeTask {
  readonly id: string;
  readonly createdAt: number;
  readonly plan: TaskPlan;
  /** The submitted body as the fake parsed it (JSON, or form fields). */
  readonly body: unknown;
  readonly prompt: string;
  /** Protocol-specific data (PixVerse endpoint, fal app path, MiniMax API version...). */
  readonly meta: Readonly<Record<string, string>>;
  cancelledAt?: number;
}

export interface TaskState {
  readonly phase: Phase;
  /** 0..100, from elapsed run time. */
  readonly progress: number;
  /** When the task reached its terminal phase (undefined while it runs). */
  readonly endedAt?: number;
}

export interface KitOptions {
  /** The key the fake accepts; anything else is an authentication error. */
  readonly apiKey?: string;
  /** Default 'Date.now'; a test or bench may drive time by hand. */
  readonly clock?: Clock;
  /** Defaults for every task; markers and `plan` override them. */
  readonly queuedMs?: number;
  readonly runMs?: number;
  readonly outputTtlMs?: number;
  /** Decide a task's plan from its prompt and body (after markers are applied). */
  readonly plan?: (prompt: string, body: unknown, plan: TaskPlan) => Partial<TaskPlan>;
}

export type FaultKind = '429' | '429-retry-after' | '500' | 'lose';
export type RequestRole = 'submit' | 'poll' | 'cancel' | 'upload' | 'file' | 'other';

export interface Fault {
  readonly on: RequestRole | 'any';
  readonly kind: FaultKind;
  /** Retry-After in seconds for `429-retry-after` (default 1). */
  readonly retryAfterS?: number;
}

/** Counters a test or bench reads; `perSecond` is keyed by wall-clock second. */
export class FakeStats {
  requests = 0;
  accepted = 0;
  readonly acceptedIds: string[] = [];
  /** Accepted submissions per prompt: with one prompt per task, "one paid job per task" is every value being 1. */
  readonly acceptedByPrompt = new Map<string, number>();
  readonly byRole = new Map<RequestRole, number>();
  readonly perSecond = new Map<RequestRole, Map<number, number>>();
  /** When each request of a role came (wall-clock ms), in order. */
  readonly times = new Map<RequestRole, number[]>();
  /** Requests refused with a 429 (faults and business rate limits). */
  throttled = 0;
  lostAnswers = 0;
  /** Output bytes written so far by trickled file answers (a copy has started once this is > 0). */
  trickledBytes = 0;

  /** Records an accepted (paid) submission. */
  accept(task: FakeTask): void {
    this.accepted += 1;
    this.acceptedIds.push(task.id);
    this.acceptedByPrompt.set(task.prompt, (this.acceptedByPrompt.get(task.prompt) ?? 0) + 1);
  }

  count(role: RequestRole, wallMs: number): void {
    this.requests += 1;
    this.byRole.set(role, (this.byRole.get(role) ?? 0) + 1);
    let seconds = this.perSecond.get(role);
    if (!seconds) this.perSecond.set(role, (seconds = new Map<number, number>()));
    const second = Math.floor(wallMs / 1000);
    seconds.set(second, (seconds.get(second) ?? 0) + 1);
    let times = this.times.get(role);
    if (!times) this.times.set(role, (times = []));
    times.push(wallMs);
  }

  /**
   * The most requests of a role within any `windowMs` (a sliding window, not wall-clock
   * seconds): a rate kept over a longer window leaves less room to a request sent late.
   */
  maxInWindow(role: RequestRole, windowMs: number): number {
    const times = this.times.get(role) ?? [];
    let max = 0;
    for (let first = 0, last = 0; last < times.length; last += 1) {
      while ((times[last] ?? 0) - (times[first] ?? 0) >= windowMs) first += 1;
      max = Math.max(max, last - first + 1);
    }
    return max;
  }

  /** The busiest wall-clock second for a role. */
  maxPerSecond(role: RequestRole): number {
    let max = 0;
    for (const n of this.perSecond.get(role)?.values() ?? []) max = Math.max(max, n);
    return max;
  }
}

const MARKER = /\[fake:([a-z0-9-]+)\]/g;

/** Apply `[fake:<mode>]` markers of a prompt to a plan. Unknown modes are ignored. */
export function applyMarkers(prompt: string, plan: TaskPlan): TaskPlan {
  let next = { ...plan };
  for (const match of prompt.matchAll(MARKER)) {
    switch (match[1]) {
      case 'fail':
        next = { ...next, outcome: 'fail' };
        break;
      case 'moderation':
        next = { ...next, outcome: 'moderation' };
        break;
      case 'moderation-early':
        next = { ...next, refuse: 'moderation' };
        break;
      case 'invalid':
        next = { ...next, refuse: 'invalid' };
        break;
      case 'rate-limit':
        next = { ...next, refuse: 'rate-limit' };
        break;
      case 'quota':
        next = { ...next, refuse: 'quota' };
        break;
      case 'stuck':
        next = { ...next, outcome: 'stuck' };
        break;
      case 'slow':
        next = { ...next, runMs: next.runMs * 20 };
        break;
      case 'instant':
        next = { ...next, queuedMs: 0, runMs: 0 };
        break;
      case 'not-media':
        next = { ...next, output: 'not-media' };
        break;
      case 'missing-output':
        next = { ...next, output: 'missing' };
        break;
      case 'png':
        next = { ...next, output: 'png' };
        break;
      case 'expire':
        next = { ...next, outputTtlMs: 0 };
        break;
      case 'forget':
        next = { ...next, forgotten: true };
        break;
      case 'lose-answer':
        next = { ...next, loseAnswer: true };
        break;
      case 'trickle':
        next = { ...next, trickle: true };
        break;
      default:
        break;
    }
  }
  return next;
}

/** The tasks of one fake: created, looked up, and their state computed from the clock. */
export class TaskBook {
  readonly tasks = new Map<string, FakeTask>();
  readonly clock: Clock;
  private readonly defaults: TaskPlan;

  constructor(
    private readonly options: KitOptions,
    defaultOutput: OutputKind,
    private readonly newId: () => string = randomUUID,
  ) {
    this.clock = options.clock ?? Date.now;
    this.defaults = {
      queuedMs: options.queuedMs ?? 50,
      runMs: options.runMs ?? 200,
      outcome: 'succeed',
      output: defaultOutput,
      outputTtlMs: options.outputTtlMs ?? 3_600_000,
      forgotten: false,
      loseAnswer: false,
      refuse: 'none',
      trickle: false,
    };
  }

  /** The plan a submission would get (markers, then the `plan` option). */
  planFor(prompt: string, body: unknown): TaskPlan {
    const marked = applyMarkers(prompt, this.defaults);
    return { ...marked, ...(this.options.plan?.(prompt, body, marked) ?? {}) };
  }

  create(prompt: string, body: unknown, plan: TaskPlan, meta: Readonly<Record<string, string>> = {}): FakeTask {
    const task: FakeTask = { id: this.newId(), createdAt: this.clock(), plan, body, prompt, meta };
    if (!plan.forgotten) this.tasks.set(task.id, task);
    return task;
  }

  get(id: string): FakeTask | undefined {
    return this.tasks.get(id);
  }

  state(task: FakeTask): TaskState {
    const now = this.clock();
    const { queuedMs, runMs, outcome } = task.plan;
    const startAt = task.createdAt + queuedMs;
    const endAt = startAt + runMs;
    if (task.cancelledAt !== undefined) return { phase: 'cancelled', progress: 0, endedAt: task.cancelledAt };
    if (now < startAt) return { phase: 'queued', progress: 0 };
    if (outcome === 'stuck' || now < endAt) {
      const progress = outcome === 'stuck' ? 42 : Math.min(99, Math.floor(((now - startAt) / Math.max(1, runMs)) * 100));
      return { phase: 'running', progress };
    }
    if (outcome === 'fail') return { phase: 'failed', progress: 100, endedAt: endAt };
    if (outcome === 'moderation') return { phase: 'moderated', progress: 100, endedAt: endAt };
    return { phase: 'succeeded', progress: 100, endedAt: endAt };
  }

  /** Cancel if still queued or running; false when the task already ended. */
  cancel(task: FakeTask): boolean {
    const phase = this.state(task).phase;
    if (phase !== 'queued' && phase !== 'running') return false;
    task.cancelledAt = this.clock();
    return true;
  }
}

export interface Reply {
  readonly status: number;
  readonly json?: unknown;
  readonly body?: Buffer | string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A handler's answer: a reply, or `lose` (the socket is destroyed without an answer). */
export type Answer = Reply | 'lose';

export interface FakeRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
  /** The body parsed as JSON; undefined when it is not JSON. */
  readonly json: unknown;
}

export interface Route {
  readonly role: RequestRole;
  /** Run only when no fault takes the request first, so a refused request never creates a task. */
  readonly answer: () => Answer | Promise<Answer>;
}

/**
 * The HTTP half of a fake: routes requests to `route`, applies injected faults, counts, and
 * serves `/files/<task id>` outputs. A fake answers `route` with `undefined` for a 404.
 */
export class FakeHttp {
  readonly stats = new FakeStats();
  /**
   * How long a submission whose body carries `[fake:slow-submit]` waits before its answer (the
   * task is created first): a cancel of ours can land while our scheduler is submitting.
   */
  slowSubmitMs = 1_500;
  /** A trickled output: this many bytes every `trickleEveryMs`. */
  trickleChunk = 128;
  trickleEveryMs = 150;
  private readonly faults: Fault[] = [];
  private server: Server | undefined;
  origin = '';

  constructor(
    private readonly book: TaskBook,
    private readonly route: (req: FakeRequest) => Route | undefined,
    private readonly notFound: () => Reply,
  ) {}

  async listen(): Promise<void> {
    const server = createServer((req, res) => {
      // A fake's own bug answers 500 (and is visible in the test), never an unhandled rejection.
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) send(res, { status: 500, json: { fake_error: err instanceof Error ? err.message : String(err) } });
        else res.destroy();
      });
    });
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** The next `count` requests with this role get this fault. */
  inject(fault: Fault, count = 1): void {
    for (let i = 0; i < count; i += 1) this.faults.push(fault);
  }

  /** URL of a task's output on this fake's origin, expiring per its plan. */
  fileUrl(task: FakeTask, name: string): string {
    const state = this.book.state(task);
    const expires = (state.endedAt ?? this.book.clock()) + task.plan.outputTtlMs;
    return `${this.origin}/files/${task.id}/${name}?Expires=${expires}&Signature=fake`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://fake');
    const request: FakeRequest = { method: req.method ?? 'GET', url, headers: req.headers, body, json: parseJson(body) };
    const routed: Route | undefined = url.pathname.startsWith('/files/') ? { role: 'file', answer: () => this.file(url) } : this.route(request);
    const role = routed?.role ?? 'other';
    this.stats.count(role, Date.now());
    const faultIndex = this.faults.findIndex((f) => f.on === role || f.on === 'any');
    if (faultIndex >= 0) {
      const [fault] = this.faults.splice(faultIndex, 1);
      if (fault && fault.kind !== 'lose') return send(res, faultReply(fault, this.stats));
      if (fault?.kind === 'lose') {
        // The request is handled (a task may be created), then the answer never arrives.
        if (routed) await routed.answer();
        this.stats.lostAnswers += 1;
        req.socket.destroy();
        return;
      }
    }
    if (!routed) return send(res, this.notFound());
    const answer = await routed.answer();
    if (role === 'submit' && body.includes('[fake:slow-submit]')) await new Promise((resolve) => setTimeout(resolve, this.slowSubmitMs));
    if (role === 'file' && answer !== 'lose' && answer.status === 200 && this.trickled(url)) return this.trickle(res, answer);
    if (answer === 'lose') {
      this.stats.lostAnswers += 1;
      req.socket.destroy();
      return;
    }
    send(res, answer);
  }

  private trickled(url: URL): boolean {
    const [, , id] = url.pathname.split('/');
    return (id !== undefined && this.book.get(id)?.plan.trickle) === true;
  }

  /** Writes the reply's body a chunk at a time; stops when the client goes away. */
  private async trickle(res: ServerResponse, reply: Reply): Promise<void> {
    const payload = Buffer.from(reply.body ?? '');
    res.writeHead(reply.status, { ...reply.headers, 'content-length': String(payload.length) });
    for (let at = 0; at < payload.length && !res.destroyed; at += this.trickleChunk) {
      const chunk = payload.subarray(at, at + this.trickleChunk);
      res.write(chunk);
      this.stats.trickledBytes += chunk.length;
      await new Promise((resolve) => setTimeout(resolve, this.trickleEveryMs));
    }
    res.end();
  }

  private file(url: URL): Reply {
    const [, , id] = url.pathname.split('/');
    const task = id === undefined ? undefined : this.book.get(id);
    const expires = Number(url.searchParams.get('Expires'));
    if (!task) return { status: 404, body: 'NoSuchKey', headers: { 'content-type': 'application/xml' } };
    if (!(expires > this.book.clock())) {
      return {
        status: 403,
        body: '<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>',
        headers: { 'content-type': 'application/xml' },
      };
    }
    switch (task.plan.output) {
      case 'mp4':
        return { status: 200, body: TINY_MP4, headers: { 'content-type': 'video/mp4' } };
      case 'png':
        return { status: 200, body: TINY_PNG, headers: { 'content-type': 'image/png' } };
      case 'not-media':
        return { status: 200, body: NOT_A_VIDEO, headers: { 'content-type': 'video/mp4' } };
      case 'missing':
        return { status: 404, body: 'NoSuchKey', headers: { 'content-type': 'application/xml' } };
    }
  }
}

function faultReply(fault: Fault, stats: FakeStats): Reply {
  if (fault.kind === '500') return { status: 500, json: { error: 'internal' } };
  stats.throttled += 1;
  const headers: Record<string, string> = fault.kind === '429-retry-after' ? { 'retry-after': String(fault.retryAfterS ?? 1) } : {};
  return { status: 429, json: { detail: 'Request was throttled.' }, headers };
}

function send(res: ServerResponse, reply: Reply): void {
  const payload = reply.json !== undefined ? Buffer.from(JSON.stringify(reply.json)) : Buffer.from(reply.body ?? '');
  const headers: Record<string, string> = {
    ...(reply.json !== undefined ? { 'content-type': 'application/json' } : {}),
    ...reply.headers,
    'content-length': String(payload.length),
  };
  res.writeHead(reply.status, headers).end(payload);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The bearer token of a request, or '' when absent. */
export function bearer(req: FakeRequest, scheme = 'Bearer'): string {
  const header = req.headers['authorization'] ?? '';
  return header.startsWith(`${scheme} `) ? header.slice(scheme.length + 1) : '';
}

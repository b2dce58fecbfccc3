import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TINY_MP4 } from '../fakes/upstream-kit.js';
import { eventually } from './eventually.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './postgres.js';
import { freePort } from './process.js';

/**
 * The SIGKILL harness of the upstream crash specs (docs/guides/channels.md#what-an-operator-can-rely-on):
 * a mediagate child process (test/fixtures/upstream/service.ts) routes tasks to upstream fakes,
 * each behind a proxy in the test's process that sees every answer before the child does, so a
 * spec kills the child at the worst moments: after an upstream accepted a submission but before
 * the child got the answer, and while it polls. `upstreamCrashSuite` runs those kill points for a
 * table of protocols at once, sharing one child per phase; the pieces are exported for specs
 * with kill points of their own (an output copy in progress).
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);
export const CRASH_KEY = 'mg_upstream_crash_key_0123456789';

/** What a proxied request was to the upstream: only submissions and polls are kill points. */
export type CallKind = 'submit' | 'poll' | 'other';
/** What the proxy does with an answer: pass it on, or hold it until the child dies. */
export type Verdict = 'pass' | 'hold';

export interface ChildService {
  readonly child: ChildProcess;
  readonly url: string;
  readonly output: () => string;
}

/** Starts the upstream service fixture as a child process and waits for its URL. */
export async function startChild(env: Record<string, string>): Promise<ChildService> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/upstream/service.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const changed = new EventEmitter();
  child.stdout?.on('data', (chunk: Buffer) => ((output += chunk.toString()), changed.emit('change')));
  child.stderr?.on('data', (chunk: Buffer) => ((output += chunk.toString()), changed.emit('change')));
  child.on('exit', () => changed.emit('change'));
  const url = await eventually(() => (child.exitCode !== null ? 'exited' : /upstream service listening (\S+)/.exec(output)?.[1]), {
    deadline: 30_000,
    what: 'the child to start',
    wake: { emitter: changed },
  }).catch(() => 'timed out');
  if (!url.startsWith('http')) {
    child.kill('SIGKILL');
    throw new Error(`the child did not start (${url}):\n${output}`);
  }
  return { child, url, output: () => output };
}

/** SIGKILLs a child (no chance to clean up) and waits until it is gone. */
export async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

export interface CrashProxy {
  readonly origin: string;
  /** Called after the upstream answered, before the answer is passed on (or held). */
  onAnswered: (kind: CallKind) => Verdict | undefined;
  close(): Promise<void>;
}

/** The default reading of a call: output files are neither kind; POST submits, GET polls. */
export function defaultKind(method: string, path: string): CallKind {
  if (path.startsWith('/files/') || path.includes('/files/')) return 'other';
  if (method === 'POST') return 'submit';
  if (method === 'GET') return 'poll';
  return 'other';
}

/**
 * A proxy in front of `upstream`: output files stream through as they come (a slow output
 * reaches the child a chunk at a time); JSON answers have the upstream's origin replaced by the
 * proxy's, so output URLs point at the channel's own origin, which output copies trust.
 */
export async function startCrashProxy(upstream: () => string, kind: (method: string, path: string) => CallKind = defaultKind): Promise<CrashProxy> {
  let origin = '';
  const proxy: CrashProxy = { origin: '', onAnswered: () => 'pass', close: () => Promise.resolve() };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && !HOP_BY_HOP.has(name)) headers[name] = value;
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        const path = req.url ?? '/';
        const method = req.method ?? 'GET';
        const answer = await fetch(`${upstream()}${path}`, { method, headers, ...(body ? { body } : {}) });
        if (path.includes('/files/') && answer.body) {
          const length = answer.headers.get('content-length');
          res.writeHead(answer.status, {
            'content-type': answer.headers.get('content-type') ?? 'application/octet-stream',
            ...(length === null ? {} : { 'content-length': length }),
          });
          Readable.fromWeb(answer.body as WebReadableStream<Uint8Array>)
            .on('error', () => res.destroy())
            .pipe(res);
          return;
        }
        const raw = Buffer.from(await answer.arrayBuffer());
        const json = (answer.headers.get('content-type') ?? '').includes('json');
        const bytes = json ? Buffer.from(raw.toString().replaceAll(upstream(), origin)) : raw;
        // A held answer is never sent: the child is killed while it waits for it.
        if (proxy.onAnswered(kind(method, path)) === 'hold') return;
        const type = answer.headers.get('content-type');
        res.writeHead(answer.status, type === null ? {} : { 'content-type': type });
        res.end(bytes);
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(proxy, {
    origin,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}

/** The part of an upstream fake (test/fakes/) the harness counts with. */
export interface CrashFake {
  readonly origin: string;
  /** Accepted (paid) submissions per prompt. */
  readonly acceptedByPrompt: ReadonlyMap<string, number>;
  readonly http: { readonly stats: { readonly accepted: number; readonly trickledBytes: number } };
  close(): Promise<void>;
}

/** One protocol of a crash table. */
export interface CrashTarget {
  /** The protocol, also the channel's name. */
  readonly protocol: string;
  readonly upstreamModel: string;
  /** Request fields besides the prompt (a duration the target renders). */
  readonly body: Readonly<Record<string, unknown>>;
  /**
   * What a submission whose answer was lost ends as: `completed` where the protocol finds it
   * upstream again (Kling's `external_task_id`), else `upstream_submission_unknown`, never a
   * second submission.
   */
  readonly lost: 'completed' | 'upstream_submission_unknown';
  startFake(): Promise<CrashFake>;
  /** The channel's fields besides `protocol` and `base_url`, and the variables they name; `dir` takes files (a key file). */
  channel(fake: CrashFake, dir: string): Promise<{ fields: Record<string, unknown>; env: Record<string, string> }>;
  /** How this upstream's calls read (default `defaultKind`). */
  readonly kind?: (method: string, path: string) => CallKind;
  /**
   * The fake serves outputs from `/files/` (upstream-kit.ts), so `[fake:trickle]` makes a copy
   * in progress last seconds: a third kill point. Not for an upstream that answers the bytes
   * inline (Vertex) or from a path of its own (the Gemini file download).
   */
  readonly copies?: boolean;
}

interface TaskBody {
  status: string;
  error: { code: string; message: string } | null;
  outputs?: { url: string }[];
}

interface Wired {
  readonly target: CrashTarget;
  readonly fake: CrashFake;
  readonly proxy: CrashProxy;
  readonly model: string;
}

const BACKENDS = [...(selectedBackends().includes('sqlite') ? ['sqlite'] : []), ...((await postgresAvailability()).enabled ? ['postgres'] : [])];

/**
 * Each protocol of `targets` across SIGKILLs, on every selected store: one child takes a task per
 * protocol, and is killed once every upstream accepted its submission while the proxies hold the
 * answers; a second child takes another task per protocol and is killed once each was polled;
 * a third settles them all. Every task reaches one final state (the lost ones as `lost` says)
 * and every fake saw exactly one accepted submission per task.
 */
export function upstreamCrashSuite(title: string, targets: readonly CrashTarget[]): void {
  const wired: Wired[] = [];
  let dir = '';
  let child: ChildService | undefined;
  const env: Record<string, string> = {};

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mediagate-crash-'));
    const channels: Record<string, unknown> = {};
    const routes: unknown[] = [];
    const models: unknown[] = [];
    for (const target of targets) {
      const fake = await target.startFake();
      const proxy = await startCrashProxy(() => fake.origin, target.kind);
      const { fields, env: channelEnv } = await target.channel(fake, dir);
      Object.assign(env, channelEnv);
      const model = `crash/${target.protocol}`;
      channels[target.protocol] = { protocol: target.protocol, base_url: proxy.origin, ...fields };
      routes.push({ model, to: [{ channel: target.protocol, upstream_model: target.upstreamModel }] });
      // A declared model per protocol takes exactly what the crash task sends, whatever the target renders.
      models.push({
        id: model,
        kind: 'video',
        summary: `crash spec: ${target.protocol}`,
        params: { prompt: { type: 'string', required: true }, duration: { type: 'integer' } },
      });
      wired.push({ target, fake, proxy, model });
    }
    routes.push({ model: '*', to: [{ channel: 'sandbox' }] });
    await writeFile(join(dir, 'channels.json'), JSON.stringify({ channels, routes }));
    await writeFile(join(dir, 'models.json'), JSON.stringify({ models }));
  }, 60_000);

  afterAll(async () => {
    if (child) await killChild(child.child);
    for (const { proxy, fake } of wired) {
      await proxy.close();
      await fake.close();
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe.each(BACKENDS)(`${title} across a SIGKILL (%s)`, (backend) => {
    let database: TestDatabase | undefined;
    afterAll(async () => {
      if (child) await killChild(child.child);
      await database?.drop();
    });

    it(`${targets.map((t) => t.protocol).join(', ')}: a submission accepted upstream but not stored, a task killed while polled, an output copy killed half way; each settles once, one paid job each`, async () => {
      if (backend === 'postgres') database = await createTestDatabase();
      const childEnv = {
        ...env,
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        MEDIAGATE_DATA_DIR: join(dir, backend),
        ...(database ? { DATABASE_URL: database.url } : {}),
        MEDIAGATE_API_KEYS: CRASH_KEY,
        MEDIAGATE_ENGINE: 'instant',
        MEDIAGATE_MODELS_FILE: join(dir, 'models.json'),
        LOG_LEVEL: 'info',
        TEST_CHANNELS_FILE: join(dir, 'channels.json'),
      };
      const create = async (url: string, w: Wired, prompt: string): Promise<string> => {
        const res = await fetch(`${url}/v1/video/generations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${CRASH_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: w.model, prompt, ...w.target.body }),
        });
        const body = (await res.json()) as { id?: string };
        expect(res.status, JSON.stringify(body)).toBe(200);
        return body.id ?? '';
      };
      const settled = async (url: string, id: string): Promise<TaskBody> =>
        eventually(
          async () => {
            const task = (await (await fetch(`${url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${CRASH_KEY}` } })).json()) as TaskBody;
            return task.status === 'completed' || task.status === 'failed' ? task : undefined;
          },
          { deadline: 20_000, interval: 100, what: `task ${id} to settle` },
        );
      const lostPrompt = (w: Wired): string => `crash between send and store: ${w.target.protocol} (${backend})`;
      const polledPrompt = (w: Wired): string => `crash while polling: ${w.target.protocol} (${backend})`;
      // Done at once upstream, its output served 128 bytes at a time: the copy is under way while the polled task still runs.
      const copyPrompt = (w: Wired): string => `crash while copying [fake:instant] [fake:trickle]: ${w.target.protocol} (${backend})`;
      const copying = wired.filter((w) => w.target.copies === true);
      const withOutput = <T>(work: Promise<T>): Promise<T> =>
        work.catch((error: unknown) => {
          throw new Error(`${String(error)}\n${child?.output() ?? ''}`);
        });

      // 1. Every upstream accepts a submission; the proxies hold the answers; the child is killed.
      for (const w of wired) w.proxy.onAnswered = (kind) => (kind === 'submit' ? 'hold' : 'pass');
      child = await startChild(childEnv);
      const lost = new Map<Wired, string>();
      for (const w of wired) lost.set(w, await create(child.url, w, lostPrompt(w)));
      await withOutput(
        eventually(() => wired.every((w) => w.fake.acceptedByPrompt.get(lostPrompt(w)) === 1), { deadline: 15_000, what: 'every upstream to accept' }),
      );
      await killChild(child.child);

      // 2. Restarted; a task per protocol is killed once its upstream has been polled for it, and
      // where the fake serves files, another task once the copy of its output has begun.
      const polledAfterAccept = new Set<Wired>();
      for (const w of wired)
        w.proxy.onAnswered = (kind) => {
          if (kind === 'poll' && w.fake.acceptedByPrompt.get(polledPrompt(w)) === 1) polledAfterAccept.add(w);
          return 'pass';
        };
      child = await startChild(childEnv);
      const polled = new Map<Wired, string>();
      for (const w of wired) polled.set(w, await create(child.url, w, polledPrompt(w)));
      const trickled = new Map(copying.map((w) => [w, w.fake.http.stats.trickledBytes]));
      const copied = new Map<Wired, string>();
      for (const w of copying) copied.set(w, await create(child.url, w, copyPrompt(w)));
      const copyBegun = (w: Wired): number => w.fake.http.stats.trickledBytes - (trickled.get(w) ?? 0);
      await withOutput(
        eventually(() => polledAfterAccept.size === wired.length && copying.every((w) => copyBegun(w) >= 256), {
          deadline: 15_000,
          interval: 5,
          what: 'every upstream to be polled and every copy to begin',
        }),
      );
      await killChild(child.child);
      for (const w of copying) expect(copyBegun(w), `${w.target.protocol}: the copy was still under way`).toBeLessThan(TINY_MP4.length);

      // 3. Restarted: each task reaches one final state; nothing was submitted twice.
      for (const w of wired) w.proxy.onAnswered = () => 'pass';
      child = await startChild(childEnv);
      for (const w of wired) {
        const lostFinal = await withOutput(settled(child.url, lost.get(w) ?? ''));
        if (w.target.lost === 'completed') expect(lostFinal.status, `${w.target.protocol}: ${JSON.stringify(lostFinal.error)}`).toBe('completed');
        else expect(lostFinal.error?.code, `${w.target.protocol}: ${lostFinal.status}`).toBe(w.target.lost);
        const polledFinal = await withOutput(settled(child.url, polled.get(w) ?? ''));
        expect(polledFinal.status, `${w.target.protocol}: ${JSON.stringify(polledFinal.error)}`).toBe('completed');
        expect(w.fake.acceptedByPrompt.get(lostPrompt(w)), w.target.protocol).toBe(1);
        expect(w.fake.acceptedByPrompt.get(polledPrompt(w)), w.target.protocol).toBe(1);
        const perBackend = w.target.copies === true ? 3 : 2;
        expect(w.fake.http.stats.accepted, w.target.protocol).toBe(perBackend * (BACKENDS.indexOf(backend) + 1));
      }
      // A copy killed half way is made again from the start: whole, stored once, no partial file left.
      for (const w of copying) {
        const id = copied.get(w) ?? '';
        const final = await withOutput(settled(child.url, id));
        expect(final.status, `${w.target.protocol}: ${JSON.stringify(final.error)}`).toBe('completed');
        expect(w.fake.acceptedByPrompt.get(copyPrompt(w)), w.target.protocol).toBe(1);
        const bytes = Buffer.from(await (await fetch(final.outputs?.[0]?.url ?? '')).arrayBuffer());
        expect(bytes.equals(TINY_MP4), w.target.protocol).toBe(true);
        expect(await readdir(join(dir, backend, 'outputs', id)), w.target.protocol).toHaveLength(1);
        expect(
          (await readdir(join(dir, backend, 'work'))).filter((name) => name.includes(id)),
          w.target.protocol,
        ).toEqual([]);
      }
      await killChild(child.child);
    }, 150_000);
  });
}

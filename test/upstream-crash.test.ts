// One paid job per task across a crash (docs/guides/channels.md#what-an-operator-can-rely-on): a mediagate child process routes
// tasks to a fake DashScope through a proxy in this process, which SIGKILLs the child at the
// worst moments: after the upstream accepted a submission but before the child got the answer
// (so before it stored the upstream id), while it polls, and while it copies an output the fake
// serves slowly. After a restart every task reaches one final state and the fake saw exactly one
// accepted submission per task; a copied output is whole, stored once, and leaves no partial file.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashscopeFake, type DashscopeFake } from './fakes/dashscope.js';
import { TINY_MP4 } from './fakes/upstream-kit.js';
import { eventually } from './helpers/eventually.js';
import { freePort } from './helpers/process.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';

const KEY = 'mg_upstream_crash_key_0123456789';
const DASHSCOPE_KEY = 'sk-dashscope-test';
const ROOT = new URL('..', import.meta.url).pathname;

const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

let fake: DashscopeFake;
/** The running child's output, named in a failed wait. */
let lastOutput = (): string => '';
let proxy: Server;
let proxyOrigin = '';
let dataDir = '';
let child: ChildProcess | undefined;
/** Called by the proxy after the fake answered a request, before the answer is passed on. */
let onAnswered: (kind: 'submit' | 'poll') => void = () => {};

async function startChild(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const started = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/upstream/service.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const changed = new EventEmitter();
  started.stdout?.on('data', (chunk: Buffer) => ((output += chunk.toString()), changed.emit('change')));
  started.stderr?.on('data', (chunk: Buffer) => ((output += chunk.toString()), changed.emit('change')));
  const url = await eventually(() => /upstream service listening (\S+)/.exec(output)?.[1], {
    deadline: 30_000,
    what: `the child to start:\n${output}`,
    wake: { emitter: changed },
  });
  lastOutput = () => output;
  return { child: started, url };
}

async function kill(process: ChildProcess): Promise<void> {
  if (process.exitCode !== null || process.signalCode !== null) return;
  const exited = new Promise((resolve) => process.once('exit', resolve));
  process.kill('SIGKILL');
  await exited;
}

beforeAll(async () => {
  fake = await startDashscopeFake({ apiKey: DASHSCOPE_KEY, queuedMs: 300, runMs: 1_500 });
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && !HOP_BY_HOP.has(name)) headers[name] = value;
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        const answer = await fetch(`${fake.origin}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(body ? { body } : {}) });
        if ((req.url ?? '').startsWith('/files/') && answer.body) {
          // Output files pass as they come: a slow output reaches the child a chunk at a time.
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
        // Output URLs point back at the proxy: the channel's own origin, which output copies trust.
        const raw = Buffer.from(await answer.arrayBuffer());
        const json = (answer.headers.get('content-type') ?? '').includes('json');
        const bytes = json ? Buffer.from(raw.toString().replaceAll(fake.origin, proxyOrigin)) : raw;
        onAnswered(req.method === 'POST' ? 'submit' : 'poll');
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(bytes);
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyOrigin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  dataDir = await mkdtemp(join(tmpdir(), 'mediagate-upstream-crash-'));
  await writeFile(
    join(dataDir, 'channels.json'),
    JSON.stringify({
      channels: { wan: { protocol: 'dashscope', base_url: proxyOrigin, api_key_env: 'T_DASHSCOPE' } },
      routes: [
        { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
        { model: '*', to: [{ channel: 'sandbox' }] },
      ],
    }),
  );
}, 60_000);

afterAll(async () => {
  if (child) await kill(child);
  await new Promise((resolve) => proxy?.close(resolve));
  await fake?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

interface TaskBody {
  status: string;
  error: { code: string; message: string } | null;
  outputs?: { url: string }[];
}

const BACKENDS = [...(selectedBackends().includes('sqlite') ? ['sqlite'] : []), ...((await postgresAvailability()).enabled ? ['postgres'] : [])];

describe.each(BACKENDS)('upstream tasks across a SIGKILL (%s)', (backend) => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    if (child) await kill(child);
    await database?.drop();
  });

  it('a submission accepted upstream but not stored fails upstream_submission_unknown; a polled task completes; one paid job each', async () => {
    if (backend === 'postgres') database = await createTestDatabase();
    const env = {
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      MEDIAGATE_DATA_DIR: join(dataDir, backend),
      ...(database ? { DATABASE_URL: database.url } : {}),
      MEDIAGATE_API_KEYS: KEY,
      MEDIAGATE_ENGINE: 'instant',
      LOG_LEVEL: 'info',
      TEST_CHANNELS_FILE: join(dataDir, 'channels.json'),
      T_DASHSCOPE: DASHSCOPE_KEY,
    };
    const create = async (url: string, prompt: string): Promise<string> => {
      const res = await fetch(`${url}/v1/video/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { id: string }).id;
    };
    const read = async (url: string, id: string): Promise<TaskBody> =>
      (await (await fetch(`${url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as TaskBody;

    // 1. Killed after the upstream accepted, before the answer reached the child.
    const first = await startChild(env);
    child = first.child;
    let killed: Promise<void> | undefined;
    onAnswered = (kind) => {
      if (kind === 'submit' && !killed) killed = kill(first.child);
    };
    const lost = await create(first.url, `crash between send and store (${backend})`);
    await eventually(() => killed !== undefined, { deadline: 10_000, what: 'the kill after the submission' }).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${lastOutput()}`);
    });
    await killed;
    expect(fake.acceptedByPrompt.get(`crash between send and store (${backend})`)).toBe(1);

    // 2. Restarted; a second task is killed while polling.
    onAnswered = () => {};
    const second = await startChild(env);
    child = second.child;
    let killedPolling: Promise<void> | undefined;
    const polled = await create(second.url, `crash while polling (${backend})`);
    onAnswered = (kind) => {
      if (kind === 'poll' && !killedPolling && fake.acceptedByPrompt.get(`crash while polling (${backend})`) === 1) killedPolling = kill(second.child);
    };
    await eventually(() => killedPolling !== undefined, { deadline: 10_000, what: 'the kill while polling' });
    await killedPolling;

    // 3. Restarted: each task reaches one final state.
    onAnswered = () => {};
    const third = await startChild(env);
    child = third.child;
    const lostFinal = await eventually(async () => ((await read(third.url, lost)).status === 'failed' ? read(third.url, lost) : undefined), {
      deadline: 15_000,
      what: 'the lost submission to fail',
    });
    expect(lostFinal.error?.code).toBe('upstream_submission_unknown');
    const polledFinal = await eventually(
      async () => {
        const task = await read(third.url, polled);
        return task.status === 'completed' || task.status === 'failed' ? task : undefined;
      },
      { deadline: 15_000, what: 'the polled task to settle' },
    );
    expect(polledFinal.status, JSON.stringify(polledFinal.error)).toBe('completed');
    expect(fake.acceptedByPrompt.get(`crash between send and store (${backend})`)).toBe(1);
    expect(fake.acceptedByPrompt.get(`crash while polling (${backend})`)).toBe(1);
    expect(fake.http.stats.accepted).toBe(2 * (BACKENDS.indexOf(backend) + 1));
  }, 120_000);
});

describe.each(BACKENDS)('an output copy across a SIGKILL (%s)', (backend) => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    if (child) await kill(child);
    await database?.drop();
  });

  it('killed while copying a slow output: after a restart the task completes once with the upstream bytes, no partial file left', async () => {
    if (backend === 'postgres') database = await createTestDatabase();
    const dir = join(dataDir, `${backend}-copy`);
    const env = {
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      MEDIAGATE_DATA_DIR: dir,
      ...(database ? { DATABASE_URL: database.url } : {}),
      MEDIAGATE_API_KEYS: KEY,
      MEDIAGATE_ENGINE: 'instant',
      LOG_LEVEL: 'info',
      TEST_CHANNELS_FILE: join(dataDir, 'channels.json'),
      T_DASHSCOPE: DASHSCOPE_KEY,
    };
    const prompt = `crash while copying [fake:trickle] (${backend})`;
    const first = await startChild(env);
    child = first.child;
    const res = await fetch(`${first.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt }),
    });
    expect(res.status).toBe(200);
    const id = ((await res.json()) as { id: string }).id;

    // The copy has begun: the fake has written part of the output (it sends 128 bytes every 150 ms).
    const files = fake.http.stats.byRole.get('file') ?? 0;
    const trickled = fake.http.stats.trickledBytes;
    await eventually(() => fake.http.stats.trickledBytes - trickled >= 256, { deadline: 15_000, interval: 5, what: 'the output copy to start' }).catch(
      (error: unknown) => {
        throw new Error(`${String(error)}\n${lastOutput()}`);
      },
    );
    await kill(first.child);
    expect(fake.http.stats.trickledBytes - trickled).toBeLessThan(TINY_MP4.length);
    expect((fake.http.stats.byRole.get('file') ?? 0) - files).toBe(1);

    const second = await startChild(env);
    child = second.child;
    const final = await eventually(
      async () => {
        const task = (await (await fetch(`${second.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as TaskBody;
        return task.status === 'completed' || task.status === 'failed' ? task : undefined;
      },
      { deadline: 30_000, interval: 100, what: 'the task to settle after the restart' },
    );
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(fake.acceptedByPrompt.get(prompt)).toBe(1);
    // Copied again from the start by the restarted process.
    expect((fake.http.stats.byRole.get('file') ?? 0) - files).toBe(2);
    expect(final.outputs).toHaveLength(1);
    const bytes = Buffer.from(await (await fetch(final.outputs?.[0]?.url ?? '')).arrayBuffer());
    expect(bytes.equals(TINY_MP4)).toBe(true);
    // One file stored for the task, and nothing of the interrupted copy anywhere.
    expect(await readdir(join(dir, 'outputs', id))).toHaveLength(1);
    expect((await readdir(join(dir, 'work'))).filter((name) => name.includes(id))).toEqual([]);
  }, 90_000);
});

// One paid job per task across a crash, for the `kling` protocol (docs/guides/channels.md#what-an-operator-can-rely-on):
// the same kill points as upstream-crash.test.ts (which runs them against DashScope), against the
// fake Kling API behind a proxy in this process. A mediagate child is SIGKILLed after Kling
// accepted a submission but before the child got the task id, and again while it polls a task.
// After each restart every task reaches one final state: the lost submission is found again by
// its `external_task_id` (our task id) and completes, and the fake saw exactly one accepted
// submission per task.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKlingFake, type KlingFake } from './fakes/kling.js';
import { eventually } from './helpers/eventually.js';
import { freePort } from './helpers/process.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';

const KEY = 'mg_upstream_crash_key_0123456789';
const ACCESS = 'kling-crash-access';
const SECRET = 'kling-crash-secret';
const ROOT = new URL('..', import.meta.url).pathname;

const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

let fake: KlingFake;
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
  fake = await startKlingFake({ accessKey: ACCESS, secretKey: SECRET, queuedMs: 300, runMs: 1_500 });
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && !HOP_BY_HOP.has(name)) headers[name] = value;
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        const answer = await fetch(`${fake.origin}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(body ? { body } : {}) });
        // Output URLs point back at the proxy: the channel's own origin, which output copies trust.
        const raw = Buffer.from(await answer.arrayBuffer());
        const json = (answer.headers.get('content-type') ?? '').includes('json');
        const bytes = json ? Buffer.from(raw.toString().replaceAll(fake.origin, proxyOrigin)) : raw;
        // The file download is neither: only submissions and task queries are kill points.
        if (!(req.url ?? '').includes('/files/')) onAnswered(req.method === 'POST' ? 'submit' : 'poll');
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(bytes);
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyOrigin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  dataDir = await mkdtemp(join(tmpdir(), 'mediagate-kling-crash-'));
  await writeFile(
    join(dataDir, 'channels.json'),
    JSON.stringify({
      channels: { kling: { protocol: 'kling', base_url: proxyOrigin, access_key_env: 'T_KLING_AK', secret_key_env: 'T_KLING_SK' } },
      routes: [
        { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'kling', upstream_model: 'kling-v3' }] },
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

describe.each(BACKENDS)('kling tasks across a SIGKILL (%s)', (backend) => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    if (child) await kill(child);
    await database?.drop();
  });

  it('a submission accepted upstream but not stored is found by external_task_id and completes; a polled task completes; one paid job each', async () => {
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
      T_KLING_AK: ACCESS,
      T_KLING_SK: SECRET,
    };
    const create = async (url: string, prompt: string): Promise<string> => {
      const res = await fetch(`${url}/v1/video/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt, duration: 5 }),
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
    const lostFinal = await eventually(
      async () => {
        const task = await read(third.url, lost);
        return task.status === 'completed' || task.status === 'failed' ? task : undefined;
      },
      { deadline: 15_000, what: 'the lost submission to settle' },
    );
    expect(lostFinal.status, JSON.stringify(lostFinal.error)).toBe('completed');
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

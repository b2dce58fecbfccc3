// One paid job per task across a crash (docs/guides/channels.md#what-an-operator-can-rely-on): a mediagate child process routes
// tasks to a fake DashScope through a proxy in this process, which SIGKILLs the child at the
// worst moments: after the upstream accepted a submission but before the child got the answer
// (so before it stored the upstream id), while it polls, and while it copies an output the fake
// serves slowly. After a restart every task reaches one final state and the fake saw exactly one
// accepted submission per task; a copied output is whole, stored once, and leaves no partial file.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashscopeFake, type DashscopeFake } from './fakes/dashscope.js';
import { TINY_MP4 } from './fakes/upstream-kit.js';
import { eventually } from './helpers/eventually.js';
import { freePort } from './helpers/process.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import {
  CRASH_KEY as KEY,
  killChild as kill,
  startChild as startService,
  startCrashProxy,
  type ChildService,
  type CrashProxy,
  upstreamCrashSuite,
} from './helpers/upstream-crash.js';
import type { ChildProcess } from 'node:child_process';

const DASHSCOPE_KEY = 'sk-dashscope-test';

let fake: DashscopeFake;
/** The running child's output, named in a failed wait. */
let lastOutput = (): string => '';
let proxy: CrashProxy;
let proxyOrigin = '';
let dataDir = '';
let child: ChildProcess | undefined;

async function startChild(env: Record<string, string>): Promise<ChildService> {
  const started = await startService(env);
  lastOutput = started.output;
  return started;
}

beforeAll(async () => {
  fake = await startDashscopeFake({ apiKey: DASHSCOPE_KEY, queuedMs: 300, runMs: 1_500 });
  proxy = await startCrashProxy(() => fake.origin);
  proxyOrigin = proxy.origin;
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
  await proxy?.close();
  await fake?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

interface TaskBody {
  status: string;
  error: { code: string; message: string } | null;
  outputs?: { url: string }[];
}

const BACKENDS = [...(selectedBackends().includes('sqlite') ? ['sqlite'] : []), ...((await postgresAvailability()).enabled ? ['postgres'] : [])];

// The kill points every protocol's crash spec shares (helpers/upstream-crash.ts), here for DashScope.
upstreamCrashSuite('dashscope', [
  {
    protocol: 'dashscope',
    upstreamModel: 'wan2.7-t2v',
    body: {},
    lost: 'upstream_submission_unknown',
    startFake: () => startDashscopeFake({ apiKey: DASHSCOPE_KEY, queuedMs: 300, runMs: 1_500 }),
    channel: () => Promise.resolve({ fields: { api_key_env: 'T_DASHSCOPE' }, env: { T_DASHSCOPE: DASHSCOPE_KEY } }),
  },
]);

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

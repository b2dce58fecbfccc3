/**
 * A cancel reaches a render in another process at once (decisions §8.1): an API process cancels,
 * and the worker process rendering the task hears it through the task feed (LISTEN on the
 * store's pg_notify) and stops its ffmpeg. The lease is 600 s, so the heartbeat, which found
 * such a cancel before, comes only every 200 s: within this spec's deadlines only the feed can
 * stop the render.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, type TestDatabase } from './helpers/postgres.js';
import { startScaledOut, type ScaledOut } from './helpers/scaled-out.js';

const availability = await postgresAvailability();
const KEY = 'remote-cancel-key-0123456789';

/** Pids of the ffmpeg processes whose parent is `parent`. */
async function ffmpegChildren(parent: number): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid ...: comm may hold spaces, so split after its closing parenthesis.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const ppid = Number(stat.slice(close + 2).split(' ')[1]);
    if (ppid === parent && comm.startsWith('ffmpeg')) found.push(Number(entry));
  }
  return found;
}

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

describe.skipIf(!availability.enabled)(`a cancel in an API process stops a render in a worker process at once (PostgreSQL) ${availability.reason}`, () => {
  let database: TestDatabase | undefined;
  let cluster: ScaledOut | undefined;
  let dataDir = '';
  afterAll(async () => {
    await cluster?.close();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('the worker kills its ffmpeg, drops the scratch directory and takes the next task, long before a heartbeat', async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(join(tmpdir(), 'mediagate-remote-cancel-'));
    cluster = await startScaledOut(
      {
        DATABASE_URL: database.url,
        MEDIAGATE_DATA_DIR: dataDir,
        MEDIAGATE_API_KEYS: KEY,
        MEDIAGATE_CONCURRENCY: '1',
        // Heartbeats every 200 s: the old way of noticing a cancel made elsewhere.
        MEDIAGATE_LEASE_S: '600',
        // A render of a minute or more on a shared machine (1080p, 15 s at 60 fps).
        MEDIAGATE_SANDBOX_FPS: '60',
        LOG_LEVEL: 'info',
      },
      { apis: 1, workers: 1 },
    );
    const worker = cluster.workers[0];
    if (!worker) throw new Error('no worker');
    const workerPid = worker.child.pid ?? 0;
    const api = cluster.apis[0]?.url ?? '';
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const create = async (prompt: string): Promise<string> => {
      const res = await fetch(`${api}/v1/video/generations`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt, duration: 15, resolution: '1080p' }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { id: string }).id;
    };
    const statusOf = async (id: string): Promise<string> =>
      ((await (await fetch(`${api}/v1/video/generations/${id}`, { headers })).json()) as { status: string }).status;

    const long = await create('a long render, cancelled');
    const next = await create('the next task');
    // ffmpeg is encoding the first task (one slot: the second waits).
    const { workDir, encoders } = await eventually(
      async () => {
        const pids = await ffmpegChildren(workerPid);
        if (pids.length === 0) return false;
        const dirs = (await readdir(join(dataDir, 'work'))).filter((name) => name.startsWith(long));
        return dirs[0] !== undefined && { workDir: join(dataDir, 'work', dirs[0]), encoders: pids };
      },
      { deadline: 30_000, interval: 50, what: "the worker's ffmpeg to encode the first task" },
    );
    expect(await statusOf(next)).toBe('queued');

    const cancelledAt = Date.now();
    const res = await fetch(`${api}/v1/video/generations/${long}/cancel`, { method: 'POST', headers });
    expect(res.status).toBe(200);
    const cancelledLine = (): boolean =>
      worker
        .output()
        .split('\n')
        .some((line) => line.includes('"task cancelled"') && line.includes(`"task":"${long}"`));
    await eventually(cancelledLine, { deadline: 15_000, what: 'the worker to log the cancelled render' });
    // The render's ffmpeg is gone (killed and reaped), and so is the attempt's scratch directory.
    for (const pid of encoders) expect(await exists(`/proc/${pid}`), `ffmpeg ${pid}`).toBe(false);
    expect(await exists(workDir)).toBe(false);
    // The slot is free: the next task runs.
    await eventually(async () => (await statusOf(next)) === 'processing', { deadline: 15_000, what: 'the next task to start' });
    const stoppedAfterMs = Date.now() - cancelledAt;
    console.log(`remote cancel: render stopped and the next task started ${stoppedAfterMs} ms after the cancel (heartbeat every 200000 ms)`);
    expect(await statusOf(long)).toBe('cancelled');
  });
});

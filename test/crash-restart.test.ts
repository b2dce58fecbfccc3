import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probe } from './helpers/probe.js';
import { freePort, startProcess, type ServiceProcess } from './helpers/process.js';
import { eventually } from './helpers/eventually.js';

const KEY = 'mg_crash_test_key_0123456789';

interface VideoTask {
  id: string;
  status: string;
  progress: number | null;
  outputs: { url: string }[];
}

async function call(url: string, init?: RequestInit): Promise<VideoTask> {
  const response = await fetch(url, {
    ...init,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
  });
  if (response.status !== 200) throw new Error(`${response.status} ${await response.text()}`);
  return (await response.json()) as VideoTask;
}

describe('a task accepted is never lost', () => {
  const started: ServiceProcess[] = [];
  let dataDir = '';
  afterAll(async () => {
    for (const service of started) service.child.kill('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('runs queued tasks and takes up the processing one after SIGKILL and a restart', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mediagate-crash-'));
    const env = {
      PORT: String(await freePort()),
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_API_KEYS: KEY,
      MEDIAGATE_CONCURRENCY: '1',
    };
    const first = await startProcess(['serve'], env);
    started.push(first);
    const create = (duration: number, resolution: string) =>
      call(`${first.url}/v1/video/generations`, {
        method: 'POST',
        body: JSON.stringify({ model: 'vendora/famw-3.0-ref2v-spicy', prompt: 'crash test', duration, resolution }),
      });
    const long = await create(30, '1080p');
    const queued = [await create(2, '480p'), await create(3, '480p')];

    // Kill it while the long render is under way.
    await eventually(
      async () => {
        const task = await call(`${first.url}/v1/video/generations/${long.id}`);
        return task.status === 'processing' && (task.progress ?? 0) > 0 ? task : undefined;
      },
      { deadline: 30_000, what: 'the long task to be processing' },
    );
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    const second = await startProcess(['serve'], env);
    started.push(second);
    const finished = await Promise.all(
      [long, ...queued].map((task) =>
        eventually(
          async () => {
            const now = await call(`${second.url}/v1/video/generations/${task.id}`);
            return now.status === 'completed' || now.status === 'failed' ? now : undefined;
          },
          { deadline: 90_000, what: `task ${task.id} to finish` },
        ),
      ),
    );
    expect(finished.map((task) => task.status)).toEqual(['completed', 'completed', 'completed']);
    const media = await probe(finished[0]?.outputs[0]?.url ?? '');
    expect(media.duration).toBeCloseTo(30, 0);
    expect(media.video).toMatchObject({ width: 1920, height: 1080 });
    // One output folder per task, and no scratch left by the killed attempt.
    const outputs = await readdir(join(dataDir, 'outputs'));
    expect(outputs.sort()).toEqual([long.id, ...queued.map((task) => task.id)].sort());
    expect(await readdir(join(dataDir, 'work'))).toEqual([]);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 150_000);
});

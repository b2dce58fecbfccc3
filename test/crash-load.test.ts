/**
 * Crashes under load: while clients create tasks as fast as they can, the service is killed
 * with SIGKILL several times and started again. Afterwards every task whose creation was
 * acknowledged exists and reaches a final state, every output folder belongs to a completed
 * task and holds exactly its outputs, and the scratch directory is empty.
 *
 * CRASH_KILLS sets the number of kills (default 4).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startProcess, type ServiceProcess } from './helpers/process.js';

const KEY = 'crash-load-test-key-0123456789';
const KILLS = Number(process.env['CRASH_KILLS'] ?? '4');

interface Task {
  id: string;
  status: string;
  outputs: { url: string }[];
  error: { code: string } | null;
}

const BODIES = [
  { model: 'vendora/famw-2.7-t2v', prompt: 'crash under load', duration: 2 },
  { model: 'vendord/v6/image-to-video', prompt: 'crash under load', image: 'https://example.com/x.png', duration: 1 },
  { model: 'vendorb/famsd-2.0-mini-ref2v-spicy', prompt: 'crash under load', images: ['https://example.com/r.png'] },
];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function get(base: string, id: string): Promise<Task> {
  const res = await fetch(`${base}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${KEY}` } });
  if (res.status !== 200) throw new Error(`GET ${id}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Task;
}

describe('SIGKILL under load', () => {
  const started: ServiceProcess[] = [];
  let dataDir = '';
  afterAll(async () => {
    for (const service of started) service.child.kill('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(`no acknowledged task is lost and no output is orphaned across ${KILLS} kills`, async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mediagate-crash-load-'));
    const env = {
      PORT: String(await freePort()),
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_API_KEYS: KEY,
      // The instant engine settles in milliseconds, so kills land between render, store and
      // settle; a short lease makes takeover quick if a lease is ever left behind.
      MEDIAGATE_ENGINE: 'instant',
      MEDIAGATE_CONCURRENCY: '4',
      MEDIAGATE_LEASE_S: '2',
      MEDIAGATE_MAX_ATTEMPTS: '100',
      // One key creates as fast as it can: the per-key quotas would turn most of it into 429s.
      MEDIAGATE_RATE_LIMIT_PER_MIN: '0',
      MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
      LOG_LEVEL: 'warn',
    };
    const acknowledged = new Set<string>();
    let current = await startProcess(['serve'], env);
    started.push(current);

    // Load: a few clients creating tasks back to back, across restarts.
    let loading = true;
    const refusals: number[] = [];
    const client = async (n: number): Promise<void> => {
      for (let i = n; loading; i += 1) {
        let res: Response;
        try {
          res = await fetch(`${current.url}/v1/video/generations`, {
            method: 'POST',
            headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
            body: JSON.stringify(BODIES[i % BODIES.length]),
          });
        } catch {
          // The service is down (killed): not acknowledged, so nothing is owed. Try again soon.
          await sleep(50);
          continue;
        }
        // A body cut by the kill means the client never learnt the id: not acknowledged.
        const text = await res.text().catch(() => undefined);
        if (res.status !== 200) refusals.push(res.status);
        else if (text !== undefined && text !== '') acknowledged.add((JSON.parse(text) as Task).id);
      }
    };
    const clients = [0, 1, 2, 3].map(client);

    for (let kill = 0; kill < KILLS; kill += 1) {
      await sleep(400 + Math.floor(Math.random() * 800));
      current.child.kill('SIGKILL');
      expect(await current.exited).toBe('SIGKILL');
      current = await startProcess(['serve'], env);
      started.push(current);
    }
    await sleep(500);
    loading = false;
    await Promise.all(clients);
    expect(acknowledged.size, 'the load generator got tasks acknowledged').toBeGreaterThan(50);

    // Every acknowledged task exists and ends.
    const deadline = Date.now() + 30_000;
    const finals = new Map<string, Task>();
    while (finals.size < acknowledged.size) {
      for (const id of acknowledged) {
        if (finals.has(id)) continue;
        const task = await get(current.url, id);
        if (task.status === 'completed' || task.status === 'failed') finals.set(id, task);
      }
      if (Date.now() > deadline) throw new Error(`${acknowledged.size - finals.size} acknowledged tasks did not finish`);
      if (finals.size < acknowledged.size) await sleep(200);
    }
    const failed = [...finals.values()].filter((task) => task.status !== 'completed');
    expect(failed, 'the instant engine never fails a task').toEqual([]);

    // Output folders: one per completed task, holding exactly its outputs; no scratch left.
    await sleep(300);
    const folders = await readdir(join(dataDir, 'outputs'));
    for (const folder of folders) {
      const task = await get(current.url, folder).catch(() => undefined);
      expect(task?.status, `output folder ${folder} belongs to a completed task`).toBe('completed');
      const names = task?.outputs.map((output) => new URL(output.url).pathname.split('/').pop()) ?? [];
      expect((await readdir(join(dataDir, 'outputs', folder))).sort(), `files of ${folder}`).toEqual(names.sort());
    }
    for (const [id, task] of finals) expect(folders, `the output of ${id}`).toContain(task.id);
    expect(await readdir(join(dataDir, 'work'))).toEqual([]);
    // A creation is acknowledged or refused as the service stops (503), nothing else.
    expect(refusals.filter((status) => status !== 503)).toEqual([]);

    current.child.kill('SIGTERM');
    expect(await current.exited).toBe(0);
  }, 120_000);
});

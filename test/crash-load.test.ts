/**
 * Crashes under load: while clients create tasks as fast as they can, the service is killed
 * with SIGKILL several times and started again. Afterwards every task whose creation was
 * acknowledged exists and reaches a final state, every output folder belongs to a completed
 * task and holds exactly its outputs, and the scratch directory is empty.
 *
 * CRASH_KILLS sets the number of kills (default 4).
 */
import { EventEmitter } from 'node:events';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
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
    // 'change' at every acknowledgement and every restart: what the waits below wake on.
    const progress = new EventEmitter();
    let current = await startProcess(['serve'], env);
    started.push(current);

    // Load: a few clients creating tasks back to back, across restarts.
    let loading = true;
    const refusals: number[] = [];
    const client = async (n: number): Promise<void> => {
      for (let i = n; loading; i += 1) {
        let res: Response;
        const target = current;
        try {
          res = await fetch(`${target.url}/v1/video/generations`, {
            method: 'POST',
            headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
            body: JSON.stringify(BODIES[i % BODIES.length]),
          });
        } catch {
          // The service is down (killed): not acknowledged, so nothing is owed. Try again on the
          // next process (or soon, if this one was only busy).
          await eventually(() => current !== target || !loading, { deadline: 1_000, interval: 50, wake: { emitter: progress } }).catch(() => undefined);
          continue;
        }
        // A body cut by the kill means the client never learnt the id: not acknowledged.
        const text = await res.text().catch(() => undefined);
        if (res.status !== 200) refusals.push(res.status);
        else if (text !== undefined && text !== '') {
          acknowledged.add((JSON.parse(text) as Task).id);
          progress.emit('change');
        }
      }
    };
    const clients = [0, 1, 2, 3].map(client);

    // Each process is killed once it has acknowledged a random number of creations, so every
    // kill lands under load, at a different point of the pipeline.
    const acknowledgedBy = async (count: number, what: string): Promise<void> => {
      const target = acknowledged.size + count;
      await eventually(() => acknowledged.size >= target, { deadline: 30_000, what, wake: { emitter: progress } });
    };
    for (let kill = 0; kill < KILLS; kill += 1) {
      await acknowledgedBy(10 + Math.floor(Math.random() * 40), `creations before kill ${kill + 1}`);
      current.child.kill('SIGKILL');
      expect(await current.exited).toBe('SIGKILL');
      current = await startProcess(['serve'], env);
      started.push(current);
      progress.emit('change');
    }
    await acknowledgedBy(20, 'creations by the last process');
    loading = false;
    await Promise.all(clients);
    expect(acknowledged.size, 'the load generator got tasks acknowledged').toBeGreaterThan(50);

    // Every acknowledged task exists and ends.
    const finals = new Map<string, Task>();
    await eventually(
      async () => {
        for (const id of acknowledged) {
          if (finals.has(id)) continue;
          const task = await get(current.url, id);
          if (task.status === 'completed' || task.status === 'failed') finals.set(id, task);
        }
        return finals.size === acknowledged.size;
      },
      { deadline: 30_000, interval: 200, what: 'every acknowledged task to finish' },
    );
    const failed = [...finals.values()].filter((task) => task.status !== 'completed');
    expect(failed, 'the instant engine never fails a task').toEqual([]);

    // Output folders: one per completed task, holding exactly its outputs; no scratch left (a
    // worker removes its scratch just after the settle that made the task final).
    await eventually(async () => (await readdir(join(dataDir, 'work'))).length === 0, { what: 'the scratch directory to empty' });
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

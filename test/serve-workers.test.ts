/**
 * Whether `mediagate serve` renders: MEDIAGATE_WORKERS decides, and `--no-workers` wins when
 * given. Observed on a real process: a task it renders itself, or one it leaves queued for a
 * worker-only process on the same data directory (which then renders it).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createMediagateWorker } from '../src/service-factory.js';
import { eventually } from './helpers/eventually.js';
import { freePort, startProcess } from './helpers/process.js';

const KEY = 'mg_serve_workers_key_0123456789';
const MODEL = 'vendora/famw-2.7-t2v';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediagate-serve-workers-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

interface Case {
  readonly name: string;
  /** MEDIAGATE_WORKERS ('' = unset). */
  readonly env: string;
  readonly flag: boolean;
  readonly renders: boolean;
}

const CASES: readonly Case[] = [
  { name: 'neither set: renders', env: '', flag: false, renders: true },
  { name: 'MEDIAGATE_WORKERS=false: API only', env: 'false', flag: false, renders: false },
  { name: '--no-workers: API only', env: '', flag: true, renders: false },
  { name: '--no-workers with MEDIAGATE_WORKERS=true: the flag wins, API only', env: 'true', flag: true, renders: false },
];

async function statusOf(url: string, id: string): Promise<string> {
  const response = await fetch(`${url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${KEY}` } });
  return ((await response.json()) as { status: string }).status;
}

describe('mediagate serve: MEDIAGATE_WORKERS and --no-workers', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const dataDir = join(dir, c.name.replace(/\W+/g, '-'));
      const env = {
        PORT: String(await freePort()),
        MEDIAGATE_DATA_DIR: dataDir,
        MEDIAGATE_API_KEYS: KEY,
        MEDIAGATE_ENGINE: 'instant',
        MEDIAGATE_CONCURRENCY: '1',
        MEDIAGATE_WORKERS: c.env,
        LOG_FORMAT: 'json',
      };
      const service = await startProcess(c.flag ? ['serve', '--no-workers'] : ['serve'], env);
      try {
        const listening = await eventually(
          () =>
            service
              .output()
              .split('\n')
              .filter((line) => line.startsWith('{'))
              .map((line) => JSON.parse(line) as { msg?: string; workers?: number })
              .find((line) => line.msg === 'mediagate listening'),
          { what: 'the "mediagate listening" line' },
        );
        expect(listening.workers, service.output()).toBe(c.renders ? 1 : 0);

        const created = await fetch(`${service.url}/v1/video/generations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: MODEL, prompt: 'a fox' }),
        });
        expect(created.status).toBe(200);
        const { id } = (await created.json()) as { id: string };

        if (c.renders) {
          await eventually(async () => (await statusOf(service.url, id)) === 'completed', { deadline: 15_000, what: `${id} completed` });
          expect(service.output()).toContain('task completed');
          return;
        }
        // Left queued for workers elsewhere: a worker-only process on the same data directory
        // renders it. Had the serving process workers, it would have taken the task at its
        // creation, long before this worker starts.
        const worker = await createMediagateWorker(loadConfig({ ...env, MEDIAGATE_WORKERS: 'true' }), { logger: pino({ level: 'silent' }) });
        try {
          await worker.start();
          await eventually(async () => (await statusOf(service.url, id)) === 'completed', { deadline: 15_000, what: `${id} completed by the worker` });
        } finally {
          await worker.close(0);
        }
        expect(service.output(), 'the serving process rendered nothing').not.toContain('task completed');
      } finally {
        service.child.kill('SIGTERM');
        await service.exited;
      }
    });
  }
});

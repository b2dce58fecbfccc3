/**
 * Overload: more tasks than workers for a sustained period (one real render at a time, tasks
 * created at a steady rate well above what it renders). Creation and polling stay fast, the
 * service's memory stays flat while the backlog grows, and SIGTERM drains within its deadline,
 * after which a restarted service finishes the whole backlog.
 *
 * OVERLOAD_S sets the loaded period (default 15 s; "minutes" is OVERLOAD_S=180).
 */
import { readFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startProcess, type ServiceProcess } from './helpers/process.js';
import { eventually } from './helpers/eventually.js';

const KEY = 'overload-test-key-0123456789';
const LOADED_S = Number(process.env['OVERLOAD_S'] ?? '15');
const CREATE_PER_S = 40;

// Paces the load generator (a rate, not a wait for a condition).
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident memory of a process in bytes (Linux); undefined elsewhere. */
async function rssOf(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const kb = status ? /VmRSS:\s+(\d+) kB/.exec(status)?.[1] : undefined;
  return kb === undefined ? undefined : Number(kb) * 1024;
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

async function timed(run: () => Promise<Response>): Promise<{ ms: number; res: Response }> {
  const started = performance.now();
  const res = await run();
  await res.arrayBuffer();
  return { ms: performance.now() - started, res };
}

describe('overload', () => {
  const started: ServiceProcess[] = [];
  let dataDir = '';
  afterAll(async () => {
    for (const service of started) service.child.kill('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(`stays fast and flat with a growing backlog for ${LOADED_S} s, and drains on SIGTERM`, async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mediagate-overload-'));
    const port = String(await freePort());
    const env = {
      PORT: port,
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_API_KEYS: KEY,
      MEDIAGATE_CONCURRENCY: '1',
      // The backlog is the point here: no per-key cap on tasks in flight, and no request quota
      // (the pollers alone send a few hundred requests a second from one key).
      MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
      MEDIAGATE_RATE_LIMIT_PER_MIN: '0',
      LOG_LEVEL: 'warn',
    };
    const service = await startProcess(['serve'], env);
    started.push(service);
    const pid = service.child.pid ?? 0;
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const create = () =>
      fetch(`${service.url}/v1/video/generations`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'overload', duration: 3, resolution: '720p' }),
      });

    const ids: string[] = [];
    const createMs: number[] = [];
    const pollMs: number[] = [];
    const rss: number[] = [];
    const end = Date.now() + LOADED_S * 1000;

    const creators = [0, 1, 2, 3].map(async () => {
      // Four creators at CREATE_PER_S / 4 each: a steady rate, not a burst.
      const interval = 4000 / CREATE_PER_S;
      for (let next = Date.now(); Date.now() < end; next += interval) {
        const startedAt = performance.now();
        const res = await create();
        const body = (await res.json()) as { id: string };
        createMs.push(performance.now() - startedAt);
        expect(res.status).toBe(200);
        ids.push(body.id);
        await sleep(Math.max(0, next + interval - Date.now()));
      }
    });
    const pollers = [0, 1, 2, 3].map(async () => {
      while (Date.now() < end) {
        const id = ids[Math.floor(Math.random() * ids.length)];
        if (id === undefined) {
          await sleep(20);
          continue;
        }
        const { ms, res } = await timed(() => fetch(`${service.url}/v1/video/generations/${id}`, { headers }));
        expect(res.status).toBe(200);
        pollMs.push(ms);
        await sleep(10);
      }
    });
    const sampler = (async () => {
      while (Date.now() < end) {
        const value = await rssOf(pid);
        if (value !== undefined) rss.push(value);
        await sleep(1000);
      }
    })();
    await Promise.all([...creators, ...pollers, sampler]);

    const backlog = ((await (await fetch(`${service.url}/metrics`)).text()).match(/mediagate_tasks\{status="queued"\} (\d+)/) ?? [])[1];
    const summary = {
      created: ids.length,
      queuedAtEnd: backlog,
      createP50: quantile(createMs, 0.5),
      createP99: quantile(createMs, 0.99),
      pollP50: quantile(pollMs, 0.5),
      pollP99: quantile(pollMs, 0.99),
      rssMb: rss.map((value) => Math.round(value / 1e6)),
    };
    console.log(`overload: ${JSON.stringify(summary)}`);
    // More tasks than workers: far more were created than one worker rendered.
    expect(ids.length, JSON.stringify(summary)).toBeGreaterThan(CREATE_PER_S * LOADED_S * 0.6);
    // Fast: generous bounds for a shared CI machine that is also rendering video (and running
    // other suites in parallel); typical figures are a few ms at the median.
    expect(summary.createP50, JSON.stringify(summary)).toBeLessThan(50);
    expect(summary.pollP50, JSON.stringify(summary)).toBeLessThan(50);
    expect(summary.createP99, JSON.stringify(summary)).toBeLessThan(500);
    expect(summary.pollP99, JSON.stringify(summary)).toBeLessThan(500);
    // Not slowing down as the backlog grows: the last third is no slower than 3x the first.
    const third = Math.floor(createMs.length / 3);
    expect(quantile(createMs.slice(-third), 0.5), JSON.stringify(summary)).toBeLessThan(Math.max(20, 3 * quantile(createMs.slice(0, third), 0.5)));
    // Flat: after warm-up (the first renders load sharp and fonts), resident memory does not climb.
    if (rss.length >= 6) {
      const warm = rss.slice(4);
      const growth = Math.max(...warm) - (warm[0] ?? 0);
      expect(growth, JSON.stringify(summary)).toBeLessThan(120 * 1024 * 1024);
    }

    // SIGTERM with a render running and a backlog queued: exits 0 within the drain deadline.
    const termAt = Date.now();
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(Date.now() - termAt, 'drained within the 10 s deadline (plus margin)').toBeLessThan(15_000);

    // The backlog survived the shutdown: a restarted service (instant engine, to be quick) ends every task.
    const again = await startProcess(['serve'], { ...env, MEDIAGATE_ENGINE: 'instant', MEDIAGATE_CONCURRENCY: '8' });
    started.push(again);
    const pending = new Set(ids);
    await eventually(
      async () => {
        for (const id of [...pending]) {
          const task = (await (await fetch(`${again.url}/v1/video/generations/${id}`, { headers })).json()) as { status: string };
          if (task.status === 'completed' || task.status === 'failed') pending.delete(id);
        }
        return pending.size === 0;
      },
      { deadline: 60_000, interval: 200, what: 'every created task to end' },
    ).catch(() => undefined);
    expect(pending.size, 'every created task ends after the restart').toBe(0);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  }, 180_000);
});

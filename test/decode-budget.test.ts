/**
 * Decoding is bounded per process, not per image: a few KB of interlaced PNG
 * declaring 7000x7000 pixels is decoded whole (~200 MB as RGBA), so two workers decoding two at
 * once, or more, multiply it. The sandbox takes each decode's pixels from one process-wide
 * budget (MEDIAGATE_DECODE_PIXEL_BUDGET), read from the header before decoding.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { PixelBudget } from '../src/engines/sandbox/pixel-budget.js';
import { eventually } from './helpers/eventually.js';
import { freePort, startProcess, type ServiceProcess } from './helpers/process.js';

const KEY = 'decode-budget-key-0123456789';
const SIDE = 7000;
const BUDGET = 50_000_000;
// Four, not the two: with two, the old unbounded code peaked at baseline + 364 MB, inside the
// generous ceiling below; with four it decodes four images at once and goes far past it.
const WORKERS = 4;

/** Resident memory of a process in bytes (Linux). */
async function rssOf(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const kb = status ? /VmRSS:\s+(\d+) kB/.exec(status)?.[1] : undefined;
  return kb === undefined ? undefined : Number(kb) * 1024;
}

describe('PixelBudget: a weighted semaphore over decoded pixels', () => {
  it('admits decodes while their sum fits, queues the rest in order, and lets a larger-than-budget image run alone', async () => {
    const budget = new PixelBudget(100);
    const first = await budget.acquire(60);
    const order: string[] = [];
    const big = budget.acquire(500).then((release) => (order.push('big'), release));
    // Fits beside `first`, but must not overtake the waiting large image.
    const small = budget.acquire(10).then((release) => (order.push('small'), release));
    await Promise.resolve();
    expect(order).toEqual([]);
    first();
    const releaseBig = await big;
    expect(budget.inUse).toBe(100);
    expect(order).toEqual(['big']);
    releaseBig();
    releaseBig(); // idempotent
    (await small)();
    expect(order).toEqual(['big', 'small']);
    expect(budget.inUse).toBe(0);
  });

  it('a waiter whose signal aborts leaves the queue and unblocks those behind it', async () => {
    const budget = new PixelBudget(100);
    const held = await budget.acquire(50);
    const controller = new AbortController();
    const blocked = budget.acquire(100, controller.signal);
    const behind = budget.acquire(40);
    controller.abort(new Error('cancelled'));
    await expect(blocked).rejects.toThrow('cancelled');
    (await behind)();
    held();
    expect(budget.inUse).toBe(0);
  });
});

describe('a flood of large-pixel inputs stays under a memory ceiling', () => {
  const started: ServiceProcess[] = [];
  let dataDir = '';
  afterAll(async () => {
    for (const service of started) service.child.kill('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('eight 7000x7000 interlaced PNGs with four workers: peak RSS within baseline + budget x 4 B x 2, every task completes', async () => {
    // Interlaced (Adam7) RGBA: libvips cannot stream it, the whole image is decoded at once.
    const png = await sharp({ create: { width: SIDE, height: SIDE, channels: 4, background: { r: 40, g: 90, b: 160, alpha: 1 } } })
      .png({ progressive: true, palette: true, compressionLevel: 9 })
      .toBuffer();
    const image = `data:image/png;base64,${png.toString('base64')}`;
    const warmUp = `data:image/png;base64,${(
      await sharp({ create: { width: 320, height: 320, channels: 3, background: '#204060' } })
        .png()
        .toBuffer()
    ).toString('base64')}`;

    dataDir = await mkdtemp(join(tmpdir(), 'mediagate-decode-budget-'));
    const service = await startProcess(['serve'], {
      PORT: String(await freePort()),
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_API_KEYS: KEY,
      MEDIAGATE_CONCURRENCY: String(WORKERS),
      MEDIAGATE_DECODE_PIXEL_BUDGET: String(BUDGET),
      LOG_LEVEL: 'warn',
    });
    started.push(service);
    const pid = service.child.pid ?? 0;
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const create = async (input: string, prompt: string): Promise<string> => {
      const res = await fetch(`${service.url}/v1/video/generations`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'vendora/famw-2.7-i2v', prompt, image: input, duration: 2, resolution: '480p' }),
      });
      const body = (await res.json()) as { id: string };
      expect(res.status, JSON.stringify(body)).toBe(200);
      return body.id;
    };
    const statusOf = async (id: string): Promise<string> =>
      ((await (await fetch(`${service.url}/v1/video/generations/${id}`, { headers })).json()) as { status: string }).status;

    // Baseline: after one small render has loaded sharp, fonts and ffmpeg's pipes.
    const warm = await create(warmUp, 'warm up');
    await eventually(async () => (await statusOf(warm)) === 'completed', { deadline: 60_000, interval: 100, what: 'the warm-up render' });
    const baseline = (await rssOf(pid)) ?? 0;
    expect(baseline).toBeGreaterThan(0);

    // Distinct prompts: the render cache must not turn seven of them into hits.
    const ids = await Promise.all(Array.from({ length: 8 }, (_, index) => create(image, `flood ${index}`)));
    let peak = baseline;
    const pending = new Set(ids);
    const statuses = new Map<string, string>();
    await eventually(
      async () => {
        peak = Math.max(peak, (await rssOf(pid)) ?? 0);
        for (const id of [...pending]) {
          const status = await statusOf(id);
          if (status === 'completed' || status === 'failed') {
            statuses.set(id, status);
            pending.delete(id);
          }
        }
        return pending.size === 0;
      },
      { deadline: 240_000, interval: 50, what: 'all eight renders to settle' },
    );
    // The budget admits one 49-megapixel image at a time. 4 bytes per pixel (8-bit RGBA) for
    // the decoded image, times 2 for libvips' working copies and allocator slack.
    const ceiling = baseline + BUDGET * 4 * 2;
    const figures = { baselineMb: Math.round(baseline / 1e6), peakMb: Math.round(peak / 1e6), ceilingMb: Math.round(ceiling / 1e6) };
    console.log(`decode budget: ${JSON.stringify(figures)}`);
    expect([...statuses.values()], JSON.stringify(figures)).toEqual(Array.from({ length: 8 }, () => 'completed'));
    expect(peak, JSON.stringify(figures)).toBeLessThan(ceiling);
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePricing } from '../src/billing/index.js';
import { findModel } from '../src/catalog/index.js';
import { BudgetExceeded, TaskService } from '../src/tasks/service.js';
import type { Store } from '../src/store/store.js';
import type { ClaimedTask, Task } from '../src/store/records.js';
import { openWithRaw, readBooks, setBudget, type RawDatabase } from './helpers/ledger.js';
import { STORE_BACKENDS } from './helpers/stores.js';

const video = findModel('vendora/famw-2.7-t2v');
const image = findModel('vendora/famz-image-spicy');
if (!video || !image) throw new Error('catalog rows missing');

/** 0.1 a task + 0.08 a second at 720p (the model's default resolution); images 0.02. */
const PRICING = parsePricing(
  JSON.stringify({
    currency: 'EUR',
    models: { 'vendora/famw-2.7-t2v': { per_task: 0.1, per_second: { '480p': 0.04, '720p': 0.08, '*': 0.12 } }, '*': { per_image: 0.02, per_second: 0.1 } },
  }),
);
/** A 5 s 720p task at most: 0.1 + 5 x 0.08. */
const MAX_5S = 500_000;
const KEY = 'key_budgeted';
const OTHER = 'key_unbudgeted';
const NOON = Date.UTC(2026, 10, 25, 12);

/** Budgets, reservations and the charge at the store and TaskService, on every backend. */
describe.each(STORE_BACKENDS)('usage and budgets on $name', (backend) => {
  let store: Store;
  let raw: RawDatabase;
  let cleanup: () => Promise<void>;
  let clock = NOON;
  let service: TaskService;

  beforeEach(async () => {
    ({ store, raw, cleanup } = await openWithRaw(backend));
    clock = NOON;
    service = new TaskService({ store, now: () => clock, pricing: PRICING });
    await store.insertKey({ id: KEY, hash: 'hash-a', name: 'a', createdAt: 0 });
    await store.insertKey({ id: OTHER, hash: 'hash-b', name: 'b', createdAt: 0 });
  });
  afterEach(() => cleanup());

  const create = (owner: string, params: Record<string, unknown> = { prompt: 'x', duration: 5 }): Promise<Task> => service.create(owner, video, params);
  const claim = async (id: string): Promise<ClaimedTask> => {
    const claimed = await service.claimById(id, 'w', 60_000, 3);
    if (!claimed) throw new Error(`could not claim ${id}`);
    return claimed;
  };
  const key = async (id: string) => {
    const books = await readBooks(raw);
    const found = books.keys.find((candidate) => candidate.id === id);
    if (!found) throw new Error(`no key ${id}`);
    return { ...found, rollupMismatches: books.rollupMismatches };
  };

  describe('reservation at create', () => {
    it('admits a burst only as far as the budget reaches, exactly to it', async () => {
      await setBudget(raw, KEY, 4 * MAX_5S, null);
      const results = await Promise.allSettled(Array.from({ length: 12 }, () => create(KEY)));
      const created = results.filter((result) => result.status === 'fulfilled');
      const refused = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
      expect(created).toHaveLength(4);
      expect(refused).toHaveLength(8);
      expect(refused.every((reason) => reason instanceof BudgetExceeded && reason.maxCost === MAX_5S)).toBe(true);
      const books = await key(KEY);
      expect(books).toMatchObject({ reserved: 4 * MAX_5S, activeReserved: 4 * MAX_5S, spent: 0, active: 4 });
      expect(await store.keyBudgetState(KEY, clock)).toEqual({ budget: 4 * MAX_5S, period: null, reserved: 4 * MAX_5S, spent: 0 });
    });

    it('reserves nothing for a key without a budget', async () => {
      await Promise.all(Array.from({ length: 5 }, () => create(OTHER)));
      expect(await key(OTHER)).toMatchObject({ reserved: 0, activeReserved: 0, active: 5 });
    });

    it('reserves the requested duration at the requested resolution', async () => {
      await setBudget(raw, KEY, 10 * MAX_5S, 'month');
      await create(KEY, { prompt: 'x', duration: 10, resolution: '1080p' });
      expect((await key(KEY)).reserved).toBe(100_000 + 10 * 120_000);
    });

    it('takes no idempotency key for a refused create, and a replay reserves nothing', async () => {
      await setBudget(raw, KEY, MAX_5S, null);
      const request = { key: 'k-1', requestHash: 'h-1' };
      const first = await service.createOnce(KEY, video, { prompt: 'x', duration: 5 }, request, async () => {});
      expect(first.outcome).toBe('created');
      const replay = await service.createOnce(KEY, video, { prompt: 'x', duration: 5 }, request, async () => {});
      expect(replay).toMatchObject({ outcome: 'replayed' });
      expect((await key(KEY)).reserved).toBe(MAX_5S);
      const refused = service.createOnce(KEY, video, { prompt: 'x', duration: 5 }, { key: 'k-2', requestHash: 'h-2' }, async () => {});
      await expect(refused).rejects.toBeInstanceOf(BudgetExceeded);
      expect(await store.findIdempotencyKey(KEY, 'k-2')).toBeUndefined();
      expect((await key(KEY)).reserved).toBe(MAX_5S);
    });

    it('gives back the reservation of a create whose idempotency key another create took in the same batch', async () => {
      await setBudget(raw, KEY, 10 * MAX_5S, null);
      const request = { key: 'same', requestHash: 'h' };
      const outcomes = await Promise.all(
        Array.from({ length: 4 }, () => service.createOnce(KEY, video, { prompt: 'x', duration: 5 }, request, async () => {})),
      );
      expect(outcomes.filter((outcome) => outcome.outcome === 'created')).toHaveLength(1);
      expect(await key(KEY)).toMatchObject({ reserved: MAX_5S, activeReserved: MAX_5S, active: 1 });
    });
  });

  describe('the charge when a task ends', () => {
    it('books every way a task ends once: completed at its measured usage, failed, cancelled and abandoned at 0', async () => {
      await setBudget(raw, KEY, 20 * MAX_5S, 'month');
      const [done, failed, cancelled, abandoned, raced] = await Promise.all(Array.from({ length: 5 }, () => create(KEY)));
      if (!done || !failed || !cancelled || !abandoned || !raced) throw new Error('not created');
      const running = await claim(done.id);
      // Measured 4 s (the file), not the requested 5: 0.1 + 4 x 0.08.
      expect(await service.complete(running, [], { seconds: 4, images: 0 })).toBe(true);
      expect(await service.complete(running, [], { seconds: 4, images: 0 })).toBe(false);
      expect(await service.fail(await claim(failed.id), { type: 'generation_error', code: 'generation_failed', message: 'x', param: '' })).toBe(true);
      expect((await service.cancel(KEY, cancelled.id))?.won).toBe(true);
      expect((await service.cancel(KEY, cancelled.id))?.won).toBe(false);
      // Its worker died three times: the sweep fails it.
      await claim(abandoned.id);
      await raw.query('UPDATE tasks SET lease_expires_at = 0, interruptions = 2 WHERE id = $1', [abandoned.id]);
      expect(await service.failAbandoned(3)).toBe(1);
      expect(await service.failAbandoned(3)).toBe(0);
      // A cancel racing the completion: one of them ends it, and it is charged as that one.
      const racing = await claim(raced.id);
      const [completedRace, cancelRace] = await Promise.all([service.complete(racing, [], { seconds: 5, images: 0 }), service.cancel(KEY, raced.id)]);
      expect(completedRace !== cancelRace?.won).toBe(true);

      const books = await key(KEY);
      expect(books.rollupMismatches).toEqual([]);
      expect(books).toMatchObject({ reserved: 0, activeReserved: 0, final: 5 });
      expect(books.spent).toBe(books.tasksCost);
      expect(books.spent).toBe(420_000 + (completedRace ? MAX_5S : 0));
      expect((await service.get(KEY, done.id))?.usage).toEqual({ seconds: 4, images: 0, cost: 420_000 });
      expect((await service.get(KEY, failed.id))?.usage).toEqual({ seconds: 0, images: 0, cost: 0 });
      expect((await service.get(KEY, cancelled.id))?.usage).toEqual({ seconds: 0, images: 0, cost: 0 });
    });

    it('charges a longer delivery than was reserved all the same', async () => {
      await setBudget(raw, KEY, MAX_5S, null);
      const task = await create(KEY);
      await service.complete(await claim(task.id), [], { seconds: 7, images: 0 });
      const books = await key(KEY);
      expect(books).toMatchObject({ spent: 100_000 + 7 * 80_000, reserved: 0 });
      // Over the budget now: nothing more fits.
      await expect(create(KEY)).rejects.toBeInstanceOf(BudgetExceeded);
    });

    it('books an upstream completion at the usage measured from its copies, keeping what the upstream reported for the operator', async () => {
      const upstream = new TaskService({ store, now: () => clock, pricing: PRICING, channelOf: () => 'wan' });
      await setBudget(raw, KEY, 2 * MAX_5S, null);
      const task = await upstream.create(KEY, video, { prompt: 'x', duration: 5 });
      const [claimed] = await upstream.claimUpstream(60_000, 10);
      if (!claimed) throw new Error('not claimed');
      expect(await upstream.completeUpstream(claimed, [], { seconds: 6, images: 0 }, { output_video_duration: 6 })).toBe(true);
      expect((await upstream.get(KEY, task.id))?.usage).toEqual({ seconds: 6, images: 0, cost: 100_000 + 6 * 80_000 });
      const [row] = await raw.query<{ upstream_usage: string }>('SELECT upstream_usage FROM tasks WHERE id = $1', [task.id]);
      expect(JSON.parse(row?.upstream_usage ?? 'null')).toEqual({ output_video_duration: 6 });
      expect(await key(KEY)).toMatchObject({ spent: 580_000, reserved: 0, rollupMismatches: [] });
    });

    it('counts usage for keys without a budget too, and images per image', async () => {
      const task = await service.create(OTHER, image, { prompt: 'x' });
      await service.complete(await claim(task.id), [], { seconds: 0, images: 1 });
      expect(await key(OTHER)).toMatchObject({ spent: 20_000, reserved: 0, rollupMismatches: [] });
    });

    it('starts a day budget again on the next UTC day, with the task in the day it became final', async () => {
      await setBudget(raw, KEY, MAX_5S, 'day');
      const task = await create(KEY);
      await expect(create(KEY)).rejects.toBeInstanceOf(BudgetExceeded);
      await service.complete(await claim(task.id), [], { seconds: 5, images: 0 });
      expect(await store.keyBudgetState(KEY, clock)).toMatchObject({ spent: MAX_5S, reserved: 0 });
      await expect(create(KEY)).rejects.toBeInstanceOf(BudgetExceeded);
      clock = NOON + 12 * 3_600_000; // midnight UTC
      expect(await store.keyBudgetState(KEY, clock)).toMatchObject({ spent: 0, reserved: 0 });
      const next = await create(KEY);
      clock += 60_000;
      await service.complete(await claim(next.id), [], { seconds: 3, images: 0 });
      const books = await key(KEY);
      expect(books).toMatchObject({ spent: 100_000 + 3 * 80_000, tasksCost: 100_000 + 3 * 80_000, rollupMismatches: [] });
      const days = await store.usageReport({ key: KEY, startDay: '2026-11-25', endDay: '2026-11-27', byKey: false, byModel: false, byDay: true });
      expect(days.map((row) => [row.day, row.tasks, row.seconds, row.cost])).toEqual([
        ['2026-11-25', 1, 5, MAX_5S],
        ['2026-11-26', 1, 3, 340_000],
      ]);
    });
  });

  describe('reports', () => {
    it('sums the rollup by the dimensions asked for, per key or across keys', async () => {
      const a = await create(KEY);
      const b = await create(OTHER);
      const c = await service.create(OTHER, image, { prompt: 'x' });
      await service.complete(await claim(a.id), [], { seconds: 5, images: 0 });
      await service.complete(await claim(b.id), [], { seconds: 2, images: 0 });
      await service.complete(await claim(c.id), [], { seconds: 0, images: 1 });
      const day = { startDay: '2026-11-25', endDay: '2026-11-26' };
      expect(await store.usageReport({ ...day, key: OTHER, byKey: false, byModel: true, byDay: false })).toEqual([
        { keyId: OTHER, model: video.id, day: '', tasks: 1, seconds: 2, images: 0, cost: 260_000 },
        { keyId: OTHER, model: image.id, day: '', tasks: 1, seconds: 0, images: 1, cost: 20_000 },
      ]);
      expect(await store.usageReport({ ...day, byKey: true, byModel: false, byDay: false })).toEqual([
        { keyId: KEY, model: '', day: '', tasks: 1, seconds: 5, images: 0, cost: MAX_5S },
        { keyId: OTHER, model: '', day: '', tasks: 2, seconds: 2, images: 1, cost: 280_000 },
      ]);
      expect(await store.usageReport({ startDay: '2026-11-26', endDay: '2026-11-27', byKey: true, byModel: true, byDay: true })).toEqual([]);
    });
  });
});

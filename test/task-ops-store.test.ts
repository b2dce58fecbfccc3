import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findModel } from '../src/catalog/index.js';
import { IDEMPOTENCY_TTL_MS, TaskService } from '../src/tasks/service.js';
import type { TaskStore } from '../src/store/store.js';
import type { Task } from '../src/store/records.js';
import { eventually } from './helpers/eventually.js';
import { STORE_BACKENDS } from './helpers/stores.js';

const video = findModel('vendora/famw-2.7-t2v');
const image = findModel('vendora/famz-image-spicy');
if (!video) throw new Error('catalog row missing');

/** Cancel, list and idempotency keys at the store and TaskService, on every backend. */
describe.each(STORE_BACKENDS)('task operations on $name', (backend) => {
  let store: TaskStore;
  let cleanup: () => Promise<void>;
  let clock = 1_000_000;
  let service: TaskService;

  beforeEach(async () => {
    const opened = await backend.open();
    store = opened.store;
    cleanup = () => opened.cleanup();
    clock = 1_000_000;
    service = new TaskService({ store, now: () => clock });
  });
  afterEach(async () => cleanup());

  describe('cancel', () => {
    it('cancels a queued task once, with completed_at, no outputs and no error', async () => {
      const task = await service.create('o', video, {});
      const events: Task[] = [];
      service.on('cancelled', (cancelled) => events.push(cancelled));
      clock += 5;
      const first = await service.cancel('o', task.id);
      expect(first).toMatchObject({ won: true, task: { status: 'cancelled', completedAt: clock, error: null, outputs: [] } });
      expect(await service.cancel('o', task.id)).toMatchObject({ won: false, task: { status: 'cancelled' } });
      expect(events.map((event) => event.id)).toEqual([task.id]);
      // Never claimed afterwards.
      expect(await service.claim('w', 10_000, 3)).toBeUndefined();
    });

    it('fences out the worker of a processing task: its progress, heartbeat and settle change nothing', async () => {
      await service.create('o', video, {});
      const claimed = await service.claim('w', 10_000, 3);
      if (!claimed) throw new Error('no claim');
      expect(await service.cancel('o', claimed.id)).toMatchObject({ won: true });
      expect(await service.heartbeat(claimed, 10_000)).toBe(false);
      expect(await service.progress(claimed, 50)).toBe(false);
      expect(await service.complete(claimed, [{ type: 'video', key: 'k', contentType: 'video/mp4' }])).toBe(false);
      expect(await service.fail(claimed, { type: 'generation_error', code: 'generation_failed', message: 'x', param: '' })).toBe(false);
      expect(await service.get('o', claimed.id)).toMatchObject({ status: 'cancelled', outputs: [], error: null });
    });

    it('leaves a completed or failed task untouched, and another owner gets nothing', async () => {
      await service.create('o', video, {});
      const claimed = await service.claim('w', 10_000, 3);
      if (!claimed) throw new Error('no claim');
      expect(await service.cancel('other', claimed.id)).toBeUndefined();
      expect(await service.complete(claimed, [])).toBe(true);
      const before = await service.get('o', claimed.id);
      expect(await service.cancel('o', claimed.id)).toEqual({ won: false, task: before });
      expect(await service.get('o', claimed.id)).toEqual(before);
    });

    it('settles exactly once when a cancel races the completion', async () => {
      for (let round = 0; round < 10; round += 1) {
        const task = await service.create('o', video, {});
        const claimed = await service.claimById(task.id, 'w', 10_000, 3);
        if (!claimed) throw new Error('no claim');
        const [completed, cancelled] = await Promise.all([service.complete(claimed, []), service.cancel('o', task.id)]);
        const final = await service.get('o', task.id);
        expect(completed !== (cancelled?.won ?? false)).toBe(true);
        expect(final?.status).toBe(completed ? 'completed' : 'cancelled');
      }
    });
  });

  describe('list', () => {
    it('pages newest first with a cursor, filters, and stays stable while tasks are created', async () => {
      const created: string[] = [];
      for (let i = 0; i < 25; i += 1) {
        clock += 1;
        created.push((await service.create('o', video, { i })).id);
      }
      await service.create('other', video, {});
      if (image) await service.create('o', image, {});
      const seen: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await service.list({ owner: 'o', kind: 'video', limit: 7, ...(after ? { after } : {}) });
        seen.push(...page.map((task) => task.id));
        // New tasks meanwhile sort above the cursor: they never enter a later page.
        clock += 1;
        await service.create('o', video, {});
        if (page.length < 7) break;
        after = page.at(-1)?.id;
      }
      expect(seen).toEqual([...created].reverse());
      const first = created[0] ?? '';
      await service.cancel('o', first);
      expect((await service.list({ owner: 'o', kind: 'video', status: 'cancelled', limit: 10 })).map((task) => task.id)).toEqual([first]);
      expect(await service.list({ owner: 'o', kind: 'video', model: 'vendora/famw-2.7-t2v-other', limit: 10 })).toEqual([]);
      expect((await service.list({ owner: 'o', kind: 'video', model: video.id, limit: 100 })).length).toBeGreaterThan(25);
    });
  });

  describe('idempotency keys', () => {
    const request = { key: 'key-1', requestHash: 'h1' };
    const admit = (): Promise<void> => Promise.resolve();

    it('creates once, replays the same request and refuses another', async () => {
      const first = await service.createOnce('o', video, {}, request, admit);
      expect(first.outcome).toBe('created');
      const again = await service.createOnce('o', video, {}, request, admit);
      expect(again).toMatchObject({ outcome: 'replayed', task: { id: first.outcome === 'created' ? first.task.id : '' } });
      expect(await service.createOnce('o', video, {}, { key: 'key-1', requestHash: 'h2' }, admit)).toEqual({ outcome: 'reused' });
      // Per owner: another key holder's same key is its own.
      expect((await service.createOnce('p', video, {}, request, admit)).outcome).toBe('created');
      expect(await service.list({ owner: 'o', kind: 'video', limit: 10 })).toHaveLength(1);
    });

    it('lets one of many concurrent creates with one key insert (the primary key decides)', async () => {
      // Separate services: as two processes would, none sees the others' in-flight request.
      const services = Array.from({ length: 6 }, () => new TaskService({ store, now: () => clock }));
      const outcomes = await Promise.all(services.map((each) => each.createOnce('o', video, {}, request, admit)));
      expect(outcomes.filter((outcome) => outcome.outcome === 'created')).toHaveLength(1);
      expect(new Set(outcomes.map((outcome) => (outcome.outcome === 'reused' ? '' : outcome.task.id))).size).toBe(1);
      expect(await service.list({ owner: 'o', kind: 'video', limit: 10 })).toHaveLength(1);
    });

    it('treats a key older than 24 hours as free, and a keyed create sweeps expired keys', async () => {
      const first = await service.createOnce('o', video, {}, request, admit);
      await service.createOnce('o', video, {}, { key: 'key-2', requestHash: 'h' }, admit);
      clock += IDEMPOTENCY_TTL_MS + 1;
      const later = await service.createOnce('o', video, {}, { key: 'key-1', requestHash: 'other' }, admit);
      expect(later.outcome).toBe('created');
      expect(later.outcome === 'created' && first.outcome === 'created' && later.task.id !== first.task.id).toBe(true);
      expect(await store.findIdempotencyKey('o', 'key-1')).toMatchObject({ requestHash: 'other' });
      // The sweep runs in the background of a keyed create, at most once a minute.
      await eventually(async () => (await store.findIdempotencyKey('o', 'key-2')) === undefined);
    });

    it('replaces an expired row in place, and sweeps in bounded batches', async () => {
      await store.insertTask({
        id: 'vid_a',
        kind: 'video',
        model: video.id,
        owner: 'o',
        params: {},
        createdAt: 1,
        idempotency: { key: 'k', requestHash: 'h', expiredBefore: 0 },
      });
      expect(
        await store.insertTask({
          id: 'vid_b',
          kind: 'video',
          model: video.id,
          owner: 'o',
          params: {},
          createdAt: 2,
          idempotency: { key: 'k', requestHash: 'h', expiredBefore: 1 },
        }),
      ).toBe('key_taken');
      expect(
        await store.insertTask({
          id: 'vid_c',
          kind: 'video',
          model: video.id,
          owner: 'o',
          params: {},
          createdAt: 3,
          idempotency: { key: 'k', requestHash: 'h3', expiredBefore: 2 },
        }),
      ).toBe('inserted');
      expect(await store.findIdempotencyKey('o', 'k')).toEqual({ kind: 'video', requestHash: 'h3', taskId: 'vid_c', createdAt: 3 });
      expect(await store.getTask('vid_b', 'o')).toBeUndefined();
      for (let i = 0; i < 5; i += 1) {
        await store.insertTask({
          id: `vid_s${i}`,
          kind: 'video',
          model: video.id,
          owner: 'o',
          params: {},
          createdAt: 10,
          idempotency: { key: `s${i}`, requestHash: 'h', expiredBefore: 0 },
        });
      }
      expect(await store.sweepIdempotencyKeys(11, 3)).toBe(3);
      expect(await store.sweepIdempotencyKeys(11, 3)).toBe(3);
      expect(await store.sweepIdempotencyKeys(11, 3)).toBe(0);
    });

    it('takes no key when admission refuses the request', async () => {
      const refused = service.createOnce('o', video, {}, request, () => Promise.reject(new Error('over the limit')));
      await expect(refused).rejects.toThrow('over the limit');
      expect(await store.findIdempotencyKey('o', 'key-1')).toBeUndefined();
    });
  });
});

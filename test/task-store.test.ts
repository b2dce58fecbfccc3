import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findModel } from '../src/catalog/index.js';
import { TaskService } from '../src/tasks/service.js';
import type { TaskStore } from '../src/store/store.js';
import type { TaskError } from '../src/store/records.js';
import { STORE_BACKENDS } from './helpers/stores.js';

const row = findModel('vendora/famw-2.7-t2v');
if (!row) throw new Error('catalog row missing');
const failure: TaskError = { type: 'generation_error', code: 'generation_failed', message: 'boom', param: '' };

describe.each(STORE_BACKENDS)('task store on $name', (backend) => {
  let store: TaskStore;
  let cleanup: () => Promise<void>;
  let clock = 1_000_000;
  let service: TaskService;

  beforeEach(async () => {
    ({ store, cleanup } = await backend.open());
    clock = 1_000_000;
    service = new TaskService({ store, now: () => clock });
  });
  afterEach(async () => cleanup());

  describe('group commit of creations', () => {
    it('makes every task of a burst durable and visible when its creation resolves', async () => {
      const tasks = await Promise.all(Array.from({ length: 200 }, (_, i) => service.create('o', row, { n: i })));
      const read = await Promise.all(tasks.map((task) => service.get('o', task.id)));
      expect(read.every((task, i) => task?.id === tasks[i]?.id && task?.status === 'queued')).toBe(true);
    });

    it('fails only the bad row of a batch', async () => {
      const first = await service.create('o', row, {});
      const duplicate = { id: first.id, kind: 'video' as const, model: row.id, owner: 'o', params: {}, createdAt: clock };
      const fresh = { ...duplicate, id: 'vid_fresh_one_of_the_batch__' };
      const results = await Promise.allSettled([store.insertTask(duplicate), store.insertTask(fresh)]);
      expect(results.map((result) => result.status)).toEqual(['rejected', 'fulfilled']);
      expect(await service.get('o', fresh.id)).toMatchObject({ status: 'queued' });
    });
  });

  describe('creation', () => {
    it('stores a queued task with no progress, outputs, times or error', async () => {
      const task = await service.create('owner-a', row, { prompt: 'x', duration: 5 });
      expect(await service.get('owner-a', task.id)).toEqual({ ...task, attempt: 0 });
      expect(task).toMatchObject({ status: 'queued', progress: null, outputs: [], startedAt: null, completedAt: null, error: null });
    });

    it('hides a task from every other owner', async () => {
      const task = await service.create('owner-a', row, {});
      expect(await service.get('owner-b', task.id)).toBeUndefined();
    });

    it('gives unguessable URL-safe ids', async () => {
      const ids = await Promise.all(Array.from({ length: 50 }, () => service.create('o', row, {}).then((t) => t.id)));
      expect(new Set(ids).size).toBe(50);
      for (const id of ids) expect(id).toMatch(/^vid_[A-Za-z0-9_-]{30}$/);
    });

    it('gives ids that sort by creation time (new rows go to the end of the id index)', async () => {
      const ids: string[] = [];
      for (const step of [1, 63, 64, 4095, 4096, 86_400_000]) {
        clock += step;
        ids.push((await service.create('o', row, {})).id);
      }
      expect([...ids].sort()).toEqual(ids);
    });
  });

  describe('claiming', () => {
    it('takes the oldest queued task first, sets started time, attempt 1 and progress 0', async () => {
      const first = await service.create('o', row, { n: 1 });
      clock += 1;
      await service.create('o', row, { n: 2 });
      const claimed = await service.claim('w1', 10_000, 3);
      expect(claimed).toMatchObject({ id: first.id, status: 'processing', attempt: 1, progress: 0, startedAt: clock, params: { n: 1 } });
    });

    it('returns nothing when no task is runnable', async () => {
      expect(await service.claim('w1', 10_000, 3)).toBeUndefined();
    });

    it('never hands one task to two concurrent claimers', async () => {
      await service.create('o', row, {});
      const results = await Promise.all([service.claim('w1', 10_000, 3), service.claim('w2', 10_000, 3)]);
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('takes over a task whose lease expired, with the next attempt', async () => {
      const task = await service.create('o', row, {});
      await service.claim('w1', 1000, 3);
      expect(await service.claim('w2', 1000, 3)).toBeUndefined();
      clock += 1001;
      expect(await service.claim('w2', 1000, 3)).toMatchObject({ id: task.id, attempt: 2, leaseOwner: 'w2', startedAt: 1_000_000 });
    });

    it('fails a task whose workers died maxAttempts times instead of retrying it forever', async () => {
      const task = await service.create('o', row, {});
      for (let i = 0; i < 2; i += 1) {
        expect(await service.claim(`w${i}`, 1000, 2)).toBeDefined();
        clock += 1001;
      }
      expect(await service.claim('w9', 1000, 2)).toBeUndefined();
      expect(await service.get('o', task.id)).toMatchObject({ status: 'failed', error: { code: 'generation_failed' } });
    });

    it('claims a batch: up to the limit, expired leases first, then the oldest queued, in due order', async () => {
      const stale = await service.create('o', row, { n: 0 });
      await service.claim('dead', 1000, 3);
      const queued = [];
      for (let i = 1; i <= 4; i += 1) {
        clock += 1;
        queued.push(await service.create('o', row, { n: i }));
      }
      clock += 1001;
      const batch = await service.claimMany('w1', 10_000, 3, 3);
      expect(batch.map((task) => task.id)).toEqual([stale.id, queued[0]?.id, queued[1]?.id]);
      expect(batch.map((task) => task.attempt)).toEqual([2, 1, 1]);
      expect(batch.every((task) => task.status === 'processing' && task.leaseOwner === 'w1')).toBe(true);
      const rest = await service.claimMany('w2', 10_000, 3, 10);
      expect(rest.map((task) => task.id)).toEqual([queued[2]?.id, queued[3]?.id]);
      expect(await service.claimMany('w3', 10_000, 3, 10)).toEqual([]);
    });

    it('never hands one task to two concurrent batch claimers', async () => {
      await Promise.all(Array.from({ length: 20 }, (_, i) => service.create('o', row, { n: i })));
      const batches = await Promise.all([service.claimMany('w1', 10_000, 3, 15), service.claimMany('w2', 10_000, 3, 15)]);
      const ids = batches.flat().map((task) => task.id);
      expect(ids).toHaveLength(20);
      expect(new Set(ids).size).toBe(20);
    });

    it('frees the leases of a dead owner at once', async () => {
      const task = await service.create('o', row, {});
      await service.claim('dead-worker', 60_000, 3);
      expect(await service.recoverFrom((owner) => owner === 'dead-worker')).toBe(1);
      expect(await service.claim('w2', 60_000, 3)).toMatchObject({ id: task.id, attempt: 2 });
    });
  });

  describe('claiming a named task (a queue job names it)', () => {
    it('claims a queued task by id, and a duplicate job finds nothing', async () => {
      const task = await service.create('o', row, { n: 1 });
      expect(await service.claimById(task.id, 'w1', 10_000, 3)).toMatchObject({ id: task.id, status: 'processing', attempt: 1, params: { n: 1 } });
      expect(await service.claimById(task.id, 'w2', 10_000, 3)).toBeUndefined();
    });

    it('hands a task named by two concurrent jobs to one of them', async () => {
      const task = await service.create('o', row, {});
      const results = await Promise.all([1, 2, 3, 4].map((n) => service.claimById(task.id, `w${n}`, 10_000, 3)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('claims several named tasks at once, each for its own caller', async () => {
      const tasks = await Promise.all([1, 2, 3].map((n) => service.create('o', row, { n })));
      // Made in one turn of the event loop: on PostgreSQL, one UPDATE. Task 1 is named twice.
      const results = await Promise.all(
        [...tasks, tasks[0]].map((task, i) => (task ? service.claimById(task.id, `w${i}`, 10_000, 3) : Promise.resolve(undefined))),
      );
      const got = results.map((claimed) => claimed && { id: claimed.id, owner: claimed.leaseOwner, n: claimed.params['n'] });
      expect(got.slice(1, 3)).toEqual(tasks.slice(1).map((task, i) => ({ id: task.id, owner: `w${i + 1}`, n: i + 2 })));
      expect([got[0], got[3]].filter(Boolean)).toHaveLength(1);
      expect(got[0] ?? got[3]).toMatchObject({ id: tasks[0]?.id, n: 1 });
    });

    it('takes over by id only once the lease has expired', async () => {
      const task = await service.create('o', row, {});
      await service.claimById(task.id, 'w1', 1000, 3);
      expect(await service.claimById(task.id, 'w2', 1000, 3)).toBeUndefined();
      clock += 1001;
      expect(await service.claimById(task.id, 'w2', 1000, 3)).toMatchObject({ attempt: 2, leaseOwner: 'w2' });
    });

    it('never claims a settled task (a late job)', async () => {
      const task = await service.create('o', row, {});
      const claimed = await service.claimById(task.id, 'w1', 1000, 3);
      if (!claimed) throw new Error('not claimed');
      await service.complete(claimed, []);
      clock += 5000;
      expect(await service.claimById(task.id, 'w2', 1000, 3)).toBeUndefined();
      expect(await service.claimById('vid_unknown', 'w2', 1000, 3)).toBeUndefined();
      expect(await service.get('o', task.id)).toMatchObject({ status: 'completed', attempt: 1 });
    });

    it('fails instead of claiming a task whose workers died maxAttempts times', async () => {
      const task = await service.create('o', row, {});
      await service.claimById(task.id, 'w1', 1000, 1);
      clock += 1001;
      expect(await service.claimById(task.id, 'w2', 1000, 1)).toBeUndefined();
      expect(await service.get('o', task.id)).toMatchObject({ status: 'failed', error: { code: 'generation_failed' } });
    });
  });

  describe('attempts lost to stopped workers', () => {
    it('does not count graceful hand-backs against maxAttempts', async () => {
      const task = await service.create('o', row, {});
      for (let i = 0; i < 3; i += 1) {
        const claimed = await service.claim(`w${i}`, 1000, 2);
        if (!claimed) throw new Error('not claimed');
        expect(await service.release(claimed)).toBe(true);
      }
      // Claimed a fourth time; its worker dies once: taken over, not failed.
      await service.claim('w3', 1000, 2);
      clock += 1001;
      expect(await service.claim('w4', 1000, 2)).toMatchObject({ id: task.id, attempt: 5 });
      // Dies a second time: two attempts lost, the task fails.
      clock += 1001;
      expect(await service.claim('w5', 1000, 2)).toBeUndefined();
      expect(await service.get('o', task.id)).toMatchObject({ status: 'failed' });
    });
  });

  describe('settling exactly once', () => {
    it('completes with progress 100, outputs and a completion time', async () => {
      const task = await service.create('o', row, {});
      const claimed = await service.claim('w1', 10_000, 3);
      if (!claimed) throw new Error('not claimed');
      clock += 500;
      const outputs = [{ type: 'video' as const, key: `${task.id}/a.mp4`, contentType: 'video/mp4' }];
      expect(await service.complete(claimed, outputs)).toBe(true);
      expect(await service.get('o', task.id)).toMatchObject({ status: 'completed', progress: 100, outputs, completedAt: clock });
    });

    it('refuses a second settle of the same attempt', async () => {
      await service.create('o', row, {});
      const claimed = await service.claim('w1', 10_000, 3);
      if (!claimed) throw new Error('not claimed');
      expect(await service.complete(claimed, [])).toBe(true);
      expect(await service.fail(claimed, failure)).toBe(false);
      expect(await service.complete(claimed, [])).toBe(false);
    });

    it('settles completions made at once each on its own attempt', async () => {
      const [a, b] = await Promise.all([service.create('o', row, {}), service.create('o', row, {})]);
      if (!a || !b) throw new Error('not created');
      const onlyA = await service.claimById(a.id, 'w1', 1000, 3);
      const stale = await service.claimById(b.id, 'w1', 1000, 3);
      clock += 1001;
      const current = await service.claimById(b.id, 'w2', 1000, 3);
      if (!onlyA || !stale || !current) throw new Error('not claimed');
      // Made in one turn of the event loop: on PostgreSQL, one UPDATE carries them all.
      const won = await Promise.all([service.complete(stale, []), service.complete(onlyA, []), service.complete(current, []), service.complete(current, [])]);
      expect(won).toEqual([false, true, true, false]);
      expect(await service.get('o', b.id)).toMatchObject({ status: 'completed', attempt: 2 });
    });

    it('refuses every write of a stale attempt after a takeover', async () => {
      const task = await service.create('o', row, {});
      const stale = await service.claim('w1', 1000, 3);
      clock += 1001;
      const current = await service.claim('w2', 1000, 3);
      if (!stale || !current) throw new Error('not claimed');
      expect(await service.heartbeat(stale, 1000)).toBe(false);
      expect(await service.progress(stale, 50)).toBe(false);
      expect(await service.complete(stale, [])).toBe(false);
      expect(await service.release(stale)).toBe(false);
      expect(await service.fail(current, failure)).toBe(true);
      expect(await service.get('o', task.id)).toMatchObject({ status: 'failed', attempt: 2, error: failure });
    });

    it('keeps the last progress on failure', async () => {
      const task = await service.create('o', row, {});
      const claimed = await service.claim('w1', 10_000, 3);
      if (!claimed) throw new Error('not claimed');
      await service.progress(claimed, 42);
      await service.fail(claimed, failure);
      expect(await service.get('o', task.id)).toMatchObject({ status: 'failed', progress: 42 });
    });
  });

  describe('progress', () => {
    it('only rises, and stays below 100 until completion', async () => {
      const task = await service.create('o', row, {});
      const claimed = await service.claim('w1', 10_000, 3);
      if (!claimed) throw new Error('not claimed');
      await service.progress(claimed, 40);
      await service.progress(claimed, 30);
      expect((await service.get('o', task.id))?.progress).toBe(40);
      await service.progress(claimed, 150);
      expect((await service.get('o', task.id))?.progress).toBe(99);
    });
  });

  describe('handing back', () => {
    it('returns a released task to the queue, to be claimed with the next attempt', async () => {
      const task = await service.create('o', row, {});
      const claimed = await service.claim('w1', 10_000, 3);
      if (!claimed) throw new Error('not claimed');
      expect(await service.release(claimed)).toBe(true);
      expect(await service.get('o', task.id)).toMatchObject({ status: 'queued' });
      expect(await service.claim('w2', 10_000, 3)).toMatchObject({ id: task.id, attempt: 2 });
    });
  });
});

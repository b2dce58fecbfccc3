/**
 * The webhook outbox in the store, on every backend: the announcer makes one delivery per
 * matching endpoint of a final task, once, however many announcers run at once; claims are
 * exclusive and leased; a result is written only by the holder of the attempt (the fence); a
 * redelivery is due at once; deleting an endpoint deletes its deliveries.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findModel } from '../src/catalog/index.js';
import { newSortableId } from '../src/tasks/ids.js';
import { TaskService } from '../src/tasks/service.js';
import type { NewWebhookDelivery, Store, WebhookEndpointRecord } from '../src/store/store.js';
import type { Task } from '../src/store/records.js';
import { eventOf } from '../src/webhooks/events.js';
import { STORE_BACKENDS } from './helpers/stores.js';

const video = (() => {
  const row = findModel('vendora/famw-2.7-t2v');
  if (!row) throw new Error('catalog row missing');
  return row;
})();

function plan(task: Task, endpoints: readonly WebhookEndpointRecord[]): NewWebhookDelivery[] {
  const type = eventOf(task) ?? 'none';
  return endpoints
    .filter((endpoint) => endpoint.events.includes(type))
    .map((endpoint) => ({ id: newSortableId('msg'), endpointId: endpoint.id, owner: task.owner, type, taskId: task.id, payload: JSON.stringify({ type }) }));
}

describe.each(STORE_BACKENDS)('the webhook outbox on $name', (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let service: TaskService;

  beforeEach(async () => {
    const opened = await backend.open();
    store = opened.store;
    cleanup = () => opened.cleanup();
    service = new TaskService({ store });
  });
  afterEach(async () => cleanup());

  async function endpoint(owner: string, events: string[]): Promise<WebhookEndpointRecord> {
    const record = { id: newSortableId('wh'), owner, url: 'https://hooks.example.com/x', events, secret: 'whsec_AAAA', createdAt: Date.now() };
    await store.insertWebhookEndpoint(record);
    return record;
  }

  async function cancelledTasks(owner: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const task = await service.create(owner, video, {});
      await service.cancel(owner, task.id);
      ids.push(task.id);
    }
    return ids;
  }

  it('announces each final task once, concurrent announcers included, to the matching endpoints of its owner', async () => {
    const all = await endpoint('o', ['video.cancelled', 'video.completed']);
    const other = await endpoint('o', ['image.failed']);
    const stranger = await endpoint('someone else', ['video.cancelled']);
    await service.create('o', video, {}); // queued: not an event yet
    const ids = await cancelledTasks('o', 30);
    const results = await Promise.all([1, 2, 3].map(() => store.announceTasks(7, Date.now(), plan)));
    let total = results.reduce((sum, result) => sum + result.tasks, 0);
    for (;;) {
      const more = await store.announceTasks(7, Date.now(), plan);
      if (more.tasks === 0) break;
      total += more.tasks;
    }
    expect(total).toBe(30);
    const log = await store.listWebhookDeliveries(all.id, undefined, 100);
    expect(log.map(({ delivery }) => delivery.taskId).sort()).toEqual([...ids].sort());
    expect(log.every(({ delivery, attempts }) => delivery.status === 'pending' && delivery.type === 'video.cancelled' && attempts.length === 0)).toBe(true);
    expect(await store.listWebhookDeliveries(other.id, undefined, 100)).toEqual([]);
    expect(await store.listWebhookDeliveries(stranger.id, undefined, 100)).toEqual([]);
    expect((await store.announceTasks(100, Date.now(), plan)).tasks).toBe(0);
  });

  it('claims exclusively under a lease, fences results, retries when due, redelivers and deletes', async () => {
    const target = await endpoint('o', ['video.cancelled']);
    await cancelledTasks('o', 6);
    await store.announceTasks(100, Date.now(), plan);
    const now = Date.now();
    // Caps as wide as the batch: this spec is about leases and fences (fairness is the next).
    const wide = { perEndpoint: 100, perKey: 100 };
    const [a, b] = await Promise.all([
      store.claimWebhookDeliveries('a', now, now + 60_000, 4, wide),
      store.claimWebhookDeliveries('b', now, now + 60_000, 4, wide),
    ]);
    expect((a?.length ?? 0) + (b?.length ?? 0)).toBe(6);
    expect(new Set([...(a ?? []), ...(b ?? [])].map((delivery) => delivery.id)).size).toBe(6);
    expect(await store.claimWebhookDeliveries('c', now, now + 60_000, 10, wide)).toEqual([]);

    const first = a?.[0] ?? b?.[0];
    if (first === undefined) throw new Error('no claim');
    const holder = a?.includes(first) ? 'a' : 'b';
    const result = { id: first.id, endpointId: target.id, attempts: first.attempts, statusCode: 500, error: 'HTTP 500', at: now, durationMs: 3, now };
    // Another owner, or a stale attempt, writes nothing.
    expect(await store.settleWebhookDelivery({ ...result, owner: 'intruder', status: 'pending', nextAttemptAt: now + 10 })).toBe(false);
    expect(await store.settleWebhookDelivery({ ...result, owner: holder, attempts: first.attempts + 1, status: 'pending', nextAttemptAt: now + 10 })).toBe(
      false,
    );
    expect(await store.settleWebhookDelivery({ ...result, owner: holder, status: 'pending', nextAttemptAt: now + 10 })).toBe(true);
    expect(await store.settleWebhookDelivery({ ...result, owner: holder, status: 'pending', nextAttemptAt: now + 10 })).toBe(false);
    // Due again after its delay, with the same id.
    expect(await store.claimWebhookDeliveries('c', now + 5, now + 60_000, 10, wide)).toEqual([]);
    const [again] = await store.claimWebhookDeliveries('c', now + 10, now + 60_000, 10, wide);
    expect(again).toMatchObject({ id: first.id, attempts: 2 });
    expect(
      await store.settleWebhookDelivery({ ...result, owner: 'c', attempts: 2, status: 'failed', nextAttemptAt: null, statusCode: null, error: 'timeout' }),
    ).toBe(true);
    const failed = await store.getWebhookDelivery(first.id, target.id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 2, lastStatusCode: null, lastError: 'timeout', leased: false });
    const [logged] = (await store.listWebhookDeliveries(target.id, undefined, 100)).filter(({ delivery }) => delivery.id === first.id);
    expect(logged?.attempts.map((attempt) => [attempt.attempt, attempt.statusCode, attempt.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, null, 'timeout'],
    ]);

    // A redelivery is due at once; one held by an attempt is left to it.
    expect(await store.redeliverWebhook(first.id, target.id, now + 20)).toBe(true);
    expect((await store.getWebhookDelivery(first.id, target.id))?.status).toBe('pending');
    const held = (a?.[1] ?? b?.[1])?.id ?? '';
    expect(await store.redeliverWebhook(held, target.id, now + 20)).toBe(false);
    expect(await store.redeliverWebhook(first.id, 'wh_other', now + 20)).toBe(false);

    // Paging, newest first.
    const page = await store.listWebhookDeliveries(target.id, undefined, 4);
    const rest = await store.listWebhookDeliveries(target.id, page.at(-1)?.delivery.id, 4);
    const ordered = [...page, ...rest].map(({ delivery }) => delivery.id);
    expect(ordered).toHaveLength(6);
    expect(ordered).toEqual([...ordered].sort().reverse());

    expect(await store.deleteWebhookEndpoint(target.id, 'someone else')).toBe(false);
    expect(await store.deleteWebhookEndpoint(target.id, 'o')).toBe(true);
    expect(await store.listWebhookDeliveries(target.id, undefined, 100)).toEqual([]);
    expect(await store.claimWebhookDeliveries('d', now + 120_000, now + 180_000, 10, wide)).toEqual([]);
  });

  it('claims fairly: each endpoint and each key within its cap of attempts in flight, every key before any key gets more', async () => {
    // One key with three endpoints and many due deliveries, announced first (oldest due).
    const flooding = await Promise.all([0, 1, 2].map(() => endpoint('flood', ['video.cancelled'])));
    await cancelledTasks('flood', 6);
    await store.announceTasks(100, Date.now(), plan);
    // Two other keys, one delivery each, due later.
    const calm = await endpoint('calm', ['video.cancelled']);
    const quiet = await endpoint('quiet', ['video.cancelled']);
    await cancelledTasks('calm', 1);
    await cancelledTasks('quiet', 1);
    await store.announceTasks(100, Date.now(), plan);
    const now = Date.now() + 1000;
    const caps = { perEndpoint: 2, perKey: 4 };

    // A batch of 3: one per key, the flooding key's oldest first.
    const first = await store.claimWebhookDeliveries('p', now, now + 60_000, 3, caps);
    expect(
      first
        .map((delivery) => delivery.endpointId)
        .filter((id) => id === calm.id || id === quiet.id)
        .sort(),
    ).toEqual([calm.id, quiet.id].sort());
    expect(first.filter((delivery) => flooding.some((e) => e.id === delivery.endpointId))).toHaveLength(1);

    // The rest, however large the batch: the flooding key up to 4 in flight, no endpoint over 2.
    const second = await store.claimWebhookDeliveries('q', now, now + 60_000, 16, caps);
    const held = [...first, ...second].filter((delivery) => flooding.some((e) => e.id === delivery.endpointId));
    expect(held).toHaveLength(4);
    for (const e of flooding) expect(held.filter((delivery) => delivery.endpointId === e.id).length).toBeLessThanOrEqual(2);
    expect(await store.claimWebhookDeliveries('r', now, now + 60_000, 16, caps)).toEqual([]);

    // An attempt settled frees its slot: the key gets one more, from an endpoint under its cap.
    const done = held[0]!;
    const settled = {
      id: done.id,
      endpointId: done.endpointId,
      owner: first.includes(done) ? 'p' : 'q',
      attempts: done.attempts,
      status: 'succeeded' as const,
      nextAttemptAt: null,
      statusCode: 204,
      error: null,
      at: now,
      durationMs: 1,
      now,
    };
    expect(await store.settleWebhookDelivery(settled)).toBe(true);
    const third = await store.claimWebhookDeliveries('r', now, now + 60_000, 16, caps);
    expect(third).toHaveLength(1);
    const inFlight = [...held.slice(1), ...third];
    for (const e of flooding) expect(inFlight.filter((delivery) => delivery.endpointId === e.id).length).toBeLessThanOrEqual(2);

    // A lease that ended (a dead dispatcher) holds nothing: its deliveries are due again, in the same shares.
    const later = now + 120_000;
    const retaken = await store.claimWebhookDeliveries('s', later, later + 60_000, 16, caps);
    expect(retaken.filter((delivery) => flooding.some((e) => e.id === delivery.endpointId))).toHaveLength(4);
    expect(retaken.filter((delivery) => delivery.endpointId === calm.id || delivery.endpointId === quiet.id)).toHaveLength(2);
  });
});

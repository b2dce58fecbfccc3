/**
 * A final task's status body is serialized once and answered from those bytes, without a read
 * of the store (src/http/tasks/final-bodies.ts), and never answers what a fresh read would not: a
 * rotated signing secret drops the bytes, and a task deleted by retention (by this process or,
 * on PostgreSQL, by another one sharing the database) is 404. The cache holds at most its bytes.
 */
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { FinalBodies, watchChanges } from '../src/http/tasks/final-bodies.js';
import type { Task } from '../src/store/records.js';
import { rotateSigningSecret } from '../src/storage/signing.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, type TestDatabase } from './helpers/postgres.js';
import { startServer, type TestServer } from './helpers/server.js';
import { openSqlite, type SqliteConnection } from '../src/store/sqlite-driver.js';

const VIDEO = '/v1/video/generations';

async function poll(server: TestServer, id: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server.url}${VIDEO}/${id}`, { headers: { authorization: `Bearer ${server.keys[0]}` } });
  return { status: response.status, text: await response.text() };
}

async function completedTask(server: TestServer): Promise<string> {
  const created = await fetch(`${server.url}${VIDEO}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'final bodies', duration: 2 }),
  });
  const id = String(((await created.json()) as Record<string, unknown>)['id']);
  await eventually(async () => (JSON.parse((await poll(server, id)).text) as { status?: string }).status === 'completed', {
    deadline: 15_000,
    interval: 20,
    what: 'the task to complete',
  });
  return id;
}

/** Counts the store reads of task status the server makes (the service's `get`). */
function countReads(server: TestServer): { readonly count: number } {
  const service = server.app.service;
  const get = service.get.bind(service);
  const counter = { count: 0 };
  service.get = (owner, id) => {
    counter.count += 1;
    return get(owner, id);
  };
  return counter;
}

function task(id: string, owner: string, completedAt: number | null, status: Task['status'] = 'completed'): Task {
  return { id, owner, status, completedAt } as Task;
}

describe('the cache of final bodies: bounded by bytes, least recently used out, per owner and family', () => {
  const body = (n: number): string => 'x'.repeat(n);

  it('keeps no more than its byte cap, dropping the least recently used first', () => {
    const cache = new FinalBodies({ maxBytes: 4000, retentionMs: 86_400_000, generation: () => 0 });
    for (let i = 0; i < 10; i += 1) cache.keep(task(`vid_${i}`, 'k', Date.now()), 'video', body(800));
    expect(cache.size.bytes).toBeLessThanOrEqual(4000);
    expect(cache.size.entries).toBe(3);
    // The three most recent are held; touching the oldest of them keeps it through the next keep.
    expect(cache.get('k', 'video', 'vid_7')?.length).toBe(800);
    cache.keep(task('vid_10', 'k', Date.now()), 'video', body(800));
    expect(cache.get('k', 'video', 'vid_7')).toBeDefined();
    expect(cache.get('k', 'video', 'vid_8')).toBeUndefined();
    expect(cache.get('k', 'video', 'vid_0')).toBeUndefined();
  });

  it('answers only the owner and the family it was kept for, and keeps no unfinished task', () => {
    const cache = new FinalBodies({ maxBytes: 1 << 20, retentionMs: 86_400_000, generation: () => 0 });
    cache.keep(task('vid_a', 'owner-a', Date.now()), 'video', '{}');
    expect(cache.get('owner-b', 'video', 'vid_a')).toBeUndefined();
    expect(cache.get('owner-a', 'image', 'vid_a')).toBeUndefined();
    expect(cache.get('owner-a', 'video', 'vid_a')?.toString()).toBe('{}');
    cache.keep(task('vid_q', 'owner-a', null, 'queued'), 'video', '{}');
    cache.keep(task('vid_p', 'owner-a', null, 'processing'), 'video', '{}');
    expect(cache.size.entries).toBe(1);
  });

  it('drops everything when the signing secret changes, and stops before the retention ends', () => {
    let generation = 0;
    let now = 1_000_000;
    const cache = new FinalBodies({ maxBytes: 1 << 20, retentionMs: 10_000, generation: () => generation, now: () => now });
    cache.keep(task('vid_a', 'k', now), 'video', '{}');
    expect(cache.get('k', 'video', 'vid_a')).toBeDefined();
    generation = 1;
    expect(cache.get('k', 'video', 'vid_a')).toBeUndefined();
    expect(cache.size).toMatchObject({ bytes: 0, entries: 0 });
    cache.keep(task('vid_b', 'k', now), 'video', '{}');
    // Retention 10 s: served until 9 s after the end (the margin covers clocks of other processes).
    now += 8_999;
    expect(cache.get('k', 'video', 'vid_b')).toBeDefined();
    now += 1;
    expect(cache.get('k', 'video', 'vid_b')).toBeUndefined();
    // A body made past that point is answered but not kept.
    cache.keep(task('vid_c', 'k', now - 9_500), 'video', '{}');
    expect(cache.size.entries).toBe(0);
  });

  it('holds nothing with a cap of 0', () => {
    const cache = new FinalBodies({ maxBytes: 0, retentionMs: 86_400_000, generation: () => 0 });
    expect(cache.keep(task('vid_a', 'k', Date.now()), 'video', '{"a":1}').toString()).toBe('{"a":1}');
    expect(cache.get('k', 'video', 'vid_a')).toBeUndefined();
  });
});

describe('a change drops its body: heard from the feed, and from this process at once', () => {
  /** A feed that has not (yet) heard anything: PostgreSQL's, before the change's NOTIFY arrives. */
  function quietFeed(): { watchAll(listener: (id: string | null) => void): () => void; tell(id: string | null): void } {
    const listeners = new Set<(id: string | null) => void>();
    return {
      watchAll: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      tell: (id) => {
        for (const listener of listeners) listener(id);
      },
    };
  }

  it("drops a task's body in the step this process changed it, before any notification", () => {
    const cache = new FinalBodies({ maxBytes: 1 << 20, retentionMs: 86_400_000, generation: () => 0 });
    const service = new EventEmitter<{ changed: [{ id: string }] }>();
    const feed = quietFeed();
    const unwatch = watchChanges(cache, feed, service);
    cache.keep(task('vid_deleted', 'k', Date.now()), 'video', '{"id":"vid_deleted"}');
    cache.keep(task('vid_kept', 'k', Date.now()), 'video', '{"id":"vid_kept"}');
    expect(cache.get('k', 'video', 'vid_deleted')).toBeDefined();
    // The service's event is emitted in the step that changed the task (the front doors' DELETE).
    service.emit('changed', { id: 'vid_deleted' });
    expect(cache.get('k', 'video', 'vid_deleted')).toBeUndefined();
    expect(cache.get('k', 'video', 'vid_kept')).toBeDefined();
    // Another process's change arrives through the feed only.
    feed.tell('vid_kept');
    expect(cache.get('k', 'video', 'vid_kept')).toBeUndefined();
    unwatch();
    cache.keep(task('vid_later', 'k', Date.now()), 'video', '{}');
    service.emit('changed', { id: 'vid_later' });
    feed.tell('vid_later');
    expect(cache.get('k', 'video', 'vid_later')).toBeDefined();
  });
});

describe('polls of a final task: answered from its prepared bytes, the same as a read gives', () => {
  let cached: TestServer;
  let uncached: TestServer;
  beforeAll(async () => {
    [cached, uncached] = await Promise.all([
      startServer({ MEDIAGATE_ENGINE: 'instant' }),
      startServer({ MEDIAGATE_ENGINE: 'instant', MEDIAGATE_FINAL_BODY_CACHE_BYTES: '0' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([cached?.close(), uncached?.close()]);
  });

  it('reads the store once, then answers the same bytes without reading it', async () => {
    const id = await completedTask(cached);
    const first = await poll(cached, id);
    const reads = countReads(cached);
    const again = await Promise.all(Array.from({ length: 5 }, () => poll(cached, id)));
    expect(again.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(again.map((answer) => answer.text))).toEqual(new Set([first.text]));
    expect(reads.count).toBe(0);
    // Another key's poll of the same id is still its 404.
    const other = await fetch(`${cached.url}${VIDEO}/${id}`, { headers: { authorization: `Bearer ${cached.keys[1]}` } });
    expect(other.status).toBe(404);
  });

  it('with MEDIAGATE_FINAL_BODY_CACHE_BYTES=0 every poll reads the store', async () => {
    const id = await completedTask(uncached);
    await poll(uncached, id);
    const reads = countReads(uncached);
    for (let i = 0; i < 5; i += 1) expect((await poll(uncached, id)).status).toBe(200);
    expect(reads.count).toBe(5);
  });
});

/**
 * The first poll answered differently from `before` once the server picked up a new secret;
 * every poll after it must answer the same (no prepared bytes of the old secret come back).
 */
async function resigned(server: TestServer, id: string, before: string): Promise<string> {
  const after = await eventually(
    async () => {
      const answer = await poll(server, id);
      return answer.text !== before && answer.text;
    },
    { deadline: 10_000, interval: 50, what: 'a poll signed with the new secret' },
  );
  const next = await Promise.all(Array.from({ length: 5 }, () => poll(server, id)));
  expect(next.map((answer) => answer.text)).toEqual(Array.from({ length: 5 }, () => after));
  return after;
}

/** Whether the task row is still stored, read by the spec straight from the database. */
type RowExists = (id: string) => Promise<boolean>;

/**
 * `reader` polls (and so caches) the task; `deleter` runs the retention sweep every second (it
 * may be the reader itself). Once the row is gone, the reader's next poll must be 404: checked
 * in that order (row gone, then the poll sent), so no timing is assumed.
 */
async function expectDeletedIs404(reader: TestServer, exists: RowExists, id: string): Promise<void> {
  expect((await poll(reader, id)).status).toBe(200);
  // Polls sent after the row was seen gone, with their answers: each must be 404.
  const afterDeletion: { status: number; text: string }[] = [];
  await eventually(
    async () => {
      const gone = !(await exists(id));
      const answer = await poll(reader, id);
      if (gone) afterDeletion.push(answer);
      return afterDeletion.length >= 5;
    },
    { deadline: 20_000, interval: 20, what: 'the retention sweep to delete the task' },
  );
  expect(afterDeletion.map((answer) => answer.status)).toEqual([404, 404, 404, 404, 404]);
}

describe('retention ends prepared bytes (sqlite)', () => {
  let server: TestServer;
  let db: SqliteConnection;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_ENGINE: 'instant', MEDIAGATE_TASK_RETENTION_S: '2', MEDIAGATE_SWEEP_INTERVAL_S: '1' });
    db = openSqlite(join(server.dataDir, 'mediagate.db'), { readOnly: true });
  });
  afterAll(async () => {
    db?.close();
    await server?.close();
  });

  it('a task deleted by the retention sweep is 404, not its prepared body', async () => {
    const id = await completedTask(server);
    await expectDeletedIs404(server, (row) => Promise.resolve(db.prepare('SELECT 1 FROM tasks WHERE id = ?').get(row) !== undefined), id);
  });
});

describe('rotation ends prepared bytes (sqlite)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_ENGINE: 'instant', MEDIAGATE_SIGNING_REFRESH_S: '1' });
  });
  afterAll(async () => server?.close());

  it('a rotated signing secret gives the next polls URLs signed with the new one', async () => {
    const id = await completedTask(server);
    const before = (await poll(server, id)).text;
    await rotateSigningSecret(server.app.store, 60_000);
    const after = await resigned(server, id, before);
    const sig = (text: string): string | null => new URL((JSON.parse(text) as { outputs: { url: string }[] }).outputs[0]?.url ?? '').searchParams.get('sig');
    expect(sig(after)).not.toBe(sig(before));
    expect(JSON.parse(after)).toMatchObject({ id, status: 'completed' });
  });
});

describe.runIf((await postgresAvailability()).enabled)('retention and rotation by another process end prepared bytes (postgres)', () => {
  let database: TestDatabase;
  let reader: TestServer;
  let sweeper: TestServer;
  let client: pg.Client;
  beforeAll(async () => {
    database = await createTestDatabase();
    const shared = { DATABASE_URL: database.url, MEDIAGATE_ENGINE: 'instant', MEDIAGATE_TASK_RETENTION_S: '2', MEDIAGATE_SIGNING_REFRESH_S: '1' };
    // The reader sweeps once, at its start, then not for a day: the other process deletes.
    reader = await startServer({ ...shared, MEDIAGATE_SWEEP_INTERVAL_S: '86400' });
    sweeper = await startServer({ ...shared, MEDIAGATE_SWEEP_INTERVAL_S: '1', MEDIAGATE_WORKERS: 'false' });
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end().catch(() => {});
    await reader?.close();
    await sweeper?.close();
    await database?.drop();
  });

  it("a task deleted by the other process's retention sweep is 404 on this one", async () => {
    const id = await completedTask(reader);
    await expectDeletedIs404(reader, async (row) => (await client.query('SELECT 1 FROM tasks WHERE id = $1', [row])).rowCount === 1, id);
  });

  it('a secret rotated by the other process re-signs this one’s answers at its next refresh', async () => {
    // Retention of a day here: the prepared bytes outlive the refresh, so only the rotation can end them.
    const longLived = await startServer({ DATABASE_URL: database.url, MEDIAGATE_ENGINE: 'instant', MEDIAGATE_SIGNING_REFRESH_S: '1' });
    try {
      const id = await completedTask(longLived);
      const before = (await poll(longLived, id)).text;
      await rotateSigningSecret(sweeper.app.store, 60_000);
      await resigned(longLived, id, before);
    } finally {
      await longLived.close();
    }
  });
});

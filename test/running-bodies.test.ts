/**
 * Polls of running tasks (queued, processing) are answered from the bytes of the task's last
 * body until the task changes (src/http/tasks/final-bodies.ts): the change, whichever process makes
 * it, reaches every process through the task feed, which drops that body. A poll never answers
 * an older state than a fresh read would, later than the feed's own delay: at once in the
 * process that made the change, a notification's delivery on PostgreSQL, and on SQLite the
 * feed's check of other processes' commits (FOREIGN_COMMIT_CHECK_MS).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FinalBodies } from '../src/http/tasks/final-bodies.js';
import type { Task } from '../src/store/records.js';
import { eventually } from './helpers/eventually.js';
import { envKeyId, hashKey } from '../src/auth/api-keys.js';
import { createTestDatabase, postgresAvailability, type TestDatabase } from './helpers/postgres.js';
import { startWorkerProcess } from './helpers/process.js';
import { TEST_KEYS, startServer, type TestServer } from './helpers/server.js';

const VIDEO = '/v1/video/generations';

function task(id: string, status: Task['status'], completedAt: number | null = null): Task {
  return { id, owner: 'owner-a', status, completedAt } as Task;
}

describe('the cache of running bodies', () => {
  const options = (live: () => boolean) => ({ maxBytes: 1 << 20, retentionMs: 86_400_000, generation: () => 0, live });

  it('keeps the body of a running task read while the feed is live, until that task changes', () => {
    const cache = new FinalBodies(options(() => true));
    const read = cache.beginRead('vid_a');
    cache.keep(task('vid_a', 'processing'), 'video', '{"progress":10}', read);
    cache.keep(task('vid_b', 'queued'), 'video', '{"progress":null}', cache.beginRead('vid_b'));
    expect(cache.get('owner-a', 'video', 'vid_a')?.toString()).toBe('{"progress":10}');
    cache.changed('vid_a');
    expect(cache.get('owner-a', 'video', 'vid_a')).toBeUndefined();
    expect(cache.get('owner-a', 'video', 'vid_b')?.toString()).toBe('{"progress":null}');
    expect(cache.size).toMatchObject({ entries: 1, running: 1, reads: 0 });
  });

  it('answers but does not keep a read that a change overtook', () => {
    const cache = new FinalBodies(options(() => true));
    const read = cache.beginRead('vid_a');
    cache.changed('vid_a'); // committed after the row was read, heard before the answer came
    expect(cache.keep(task('vid_a', 'processing'), 'video', '{"progress":10}', read).toString()).toBe('{"progress":10}');
    expect(cache.get('owner-a', 'video', 'vid_a')).toBeUndefined();
    expect(cache.size.reads).toBe(0);
  });

  it('keeps no running body while the feed is not live, and drops them all when it stops', () => {
    let live = false;
    const cache = new FinalBodies(options(() => live));
    cache.keep(task('vid_a', 'processing'), 'video', '{}', cache.beginRead('vid_a'));
    expect(cache.get('owner-a', 'video', 'vid_a')).toBeUndefined();
    live = true;
    cache.keep(task('vid_a', 'processing'), 'video', '{}', cache.beginRead('vid_a'));
    cache.keep(task('vid_f', 'completed', Date.now()), 'video', '{"final":true}');
    expect(cache.size).toMatchObject({ entries: 2, running: 1 });
    live = false; // its loss not heard yet: the hit is refused all the same
    expect(cache.get('owner-a', 'video', 'vid_a')).toBeUndefined();
    expect(cache.size).toMatchObject({ entries: 1, running: 0 });
    expect(cache.get('owner-a', 'video', 'vid_f')?.toString()).toBe('{"final":true}');
  });

  it('stays within its byte cap with 100,000 running tasks polled', () => {
    const cap = 4 * 1024 * 1024;
    const cache = new FinalBodies({ ...options(() => true), maxBytes: cap });
    const body = JSON.stringify({ id: 'vid_x', object: 'video.generation', status: 'processing', progress: 42, outputs: [] }).padEnd(330, ' ');
    for (let i = 0; i < 100_000; i += 1) {
      const id = `vid_${i.toString().padStart(22, '0')}`;
      cache.keep(task(id, i % 2 === 0 ? 'processing' : 'queued'), 'video', body, cache.beginRead(id));
    }
    const { bytes, entries, running, reads } = cache.size;
    expect(bytes).toBeLessThanOrEqual(cap);
    expect(entries).toBe(running);
    expect(entries).toBeGreaterThan(5000); // the newest ones, as many as fit
    expect(entries).toBeLessThan(100_000);
    expect(reads).toBe(0);
  });

  it('changedAll drops every running body and spoils the reads in flight, and keeps final ones', () => {
    const cache = new FinalBodies(options(() => true));
    cache.keep(task('vid_a', 'queued'), 'video', '{}', cache.beginRead('vid_a'));
    cache.keep(task('vid_f', 'failed', Date.now()), 'video', '{}');
    const read = cache.beginRead('vid_b');
    cache.changedAll();
    cache.keep(task('vid_b', 'queued'), 'video', '{}', read);
    expect(cache.size).toMatchObject({ entries: 1, running: 0, reads: 0 });
  });
});

async function createVideo(server: TestServer): Promise<string> {
  const created = await fetch(`${server.url}${VIDEO}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'running bodies', duration: 2 }),
  });
  expect(created.status).toBe(200);
  return String(((await created.json()) as { id: string }).id);
}

/** The fast path's answer (a plain path), or the router's (a query sends it there: a fresh read). */
async function poll(server: TestServer, id: string, fresh = false): Promise<string> {
  const response = await fetch(`${server.url}${VIDEO}/${id}${fresh ? '?fresh=1' : ''}`, { headers: { authorization: `Bearer ${server.keys[0]}` } });
  expect(response.status).toBe(200);
  return response.text();
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

describe('polls of a running task in the process that runs it (sqlite)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_ENGINE: 'instant', MEDIAGATE_INSTANT_DELAY_MS: '3000' });
  });
  afterAll(async () => server?.close());

  it('answer each change at once, and read the store at most once per change', async () => {
    const reads = countReads(server);
    const id = await createVideo(server);
    const changes: number[] = [];
    const checks: Promise<void>[] = [];
    let polls = 0;
    // After every change the next poll must already answer what a fresh read answers.
    const onChanged = ({ id: changed }: { id: string }): void => {
      if (changed !== id) return;
      changes.push(Date.now());
      checks.push(
        (async () => {
          const [fast, fresh] = [await poll(server, id), await poll(server, id, true)];
          const [a, b] = [JSON.parse(fast) as { progress: number | null; status: string }, JSON.parse(fresh) as { progress: number | null; status: string }];
          // A later change may land between the two polls: the fast answer is never behind the fresh one.
          expect(a.status === b.status ? (a.progress ?? -1) <= (b.progress ?? -1) : true).toBe(true);
        })(),
      );
    };
    server.app.service.on('changed', onChanged);
    try {
      const seen: number[] = [];
      const final = await eventually(
        async () => {
          polls += 1;
          const body = JSON.parse(await poll(server, id)) as { status: string; progress: number | null };
          if (body.progress !== null) seen.push(body.progress);
          return body.status === 'completed' ? body : undefined;
        },
        { deadline: 20_000, interval: 5, what: 'the task to complete while polled' },
      );
      await Promise.all(checks);
      expect(final.status).toBe('completed');
      // Progress moved while polled, and never went back.
      expect(new Set(seen).size).toBeGreaterThan(3);
      expect(seen).toEqual([...seen].sort((x, y) => x - y));
      // Reads: at most one per change plus the fresh reads of the checks, far fewer than the polls.
      expect(polls).toBeGreaterThan(100);
      expect(reads.count).toBeLessThanOrEqual(2 * changes.length + 2);
    } finally {
      server.app.service.off('changed', onChanged);
    }
  });
});

const postgres = await postgresAvailability();

/** A reader API process (no workers) and the process that runs the task, apart. */
interface Apart {
  readonly reader: TestServer;
  /** Creates a task the other process will run. */
  create(): Promise<string>;
  /** The task's row as it is now, read by the test itself. */
  row(id: string): Promise<{ status: string; progress: number | null } | undefined>;
  close(): Promise<void>;
}

const owner = envKeyId(hashKey(TEST_KEYS[0]));

async function postgresApart(): Promise<Apart> {
  const database: TestDatabase = await createTestDatabase();
  const shared = { DATABASE_URL: database.url, MEDIAGATE_ENGINE: 'instant', MEDIAGATE_INSTANT_DELAY_MS: '4000' };
  const runner = await startServer(shared);
  const reader = await startServer({ ...shared, MEDIAGATE_WORKERS: 'false' });
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  return {
    reader,
    create: () => createVideo(runner),
    row: async (id) => (await client.query<{ status: string; progress: number | null }>('SELECT status, progress FROM tasks WHERE id = $1', [id])).rows[0],
    async close() {
      await client.end().catch(() => {});
      await reader.close();
      await runner.close();
      await database.drop();
    },
  };
}

/** SQLite: `serve --no-workers` and a `mediagate worker` on the same file (the feed's data_version check). */
async function sqliteApart(): Promise<Apart> {
  const reader = await startServer({ MEDIAGATE_WORKERS: 'false' });
  const worker = await startWorkerProcess({
    MEDIAGATE_DATA_DIR: reader.dataDir,
    MEDIAGATE_API_KEYS: TEST_KEYS.join(','),
    MEDIAGATE_ENGINE: 'instant',
    MEDIAGATE_INSTANT_DELAY_MS: '4000',
    MEDIAGATE_CONCURRENCY: '2',
  });
  return {
    reader,
    create: () => createVideo(reader),
    row: async (id) => reader.app.store.getTask(id, owner),
    async close() {
      worker.child.kill('SIGTERM');
      await worker.exited;
      await reader.close();
    },
  };
}

const BACKENDS = [
  { name: 'postgres', enabled: postgres.enabled, open: postgresApart },
  { name: 'sqlite, a worker process on the same file', enabled: true, open: sqliteApart },
] as const;

describe.each(BACKENDS.filter((backend) => backend.enabled))('polls of a running task on another API process ($name)', ({ open }) => {
  let apart: Apart;
  beforeAll(async () => {
    apart = await open();
  });
  afterAll(async () => apart?.close());

  it('serve the bytes until the other process changes the task, and the change within the feed delay', async () => {
    const { reader } = apart;
    const reads = countReads(reader);
    const id = await apart.create();
    const lags: number[] = [];
    let polls = 0;
    let last = -2;
    await eventually(
      async () => {
        // The row as it is now, then the reader's answer: it may be newer, never older by more than the feed's delay.
        const row = await apart.row(id);
        if (row === undefined) return undefined;
        const rowAt = Date.now();
        const progress = row.progress ?? -1;
        if (progress !== last) {
          last = progress;
          // This version must reach the reader's polls within a second (the feed's delay is far less).
          const reached = await eventually(
            async () => {
              polls += 1;
              const body = JSON.parse(await poll(reader, id)) as { status: string; progress: number | null };
              return (body.progress ?? -1) >= progress || body.status !== row.status ? Date.now() : undefined;
            },
            { deadline: 1000, interval: 2, what: `the reader to answer progress ${progress}` },
          );
          lags.push(reached - rowAt);
        } else {
          polls += 1;
          await poll(reader, id);
        }
        return row.status === 'completed' ? row : undefined;
      },
      { deadline: 30_000, interval: 5, what: 'the task to complete on the other process' },
    );
    expect(lags.length).toBeGreaterThan(3);
    expect(Math.max(...lags)).toBeLessThan(1000);
    // The reader read far less often than it answered: its polls came from the bytes between changes.
    expect(polls).toBeGreaterThan(3 * reads.count);
  });
});

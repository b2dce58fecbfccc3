/**
 * Nothing gets slower unnoticed: the work the store does for one API request must not grow
 * with the calling key's backlog. One server, two keys: one with 100 stored tasks, one with
 * 20,000 (most of them queued). Every API operation is sent once per key with the store's
 * statements recorded (a counting wrapper around the runner's three primitives); each request's
 * statements are then replayed by the sqlite3 shell, with `.stats on`, against a copy of the
 * database taken before the requests, inside a transaction that is rolled back, which reports
 * what SQLite did for each: the virtual machine steps it ran and the full-scan steps among them.
 * Those are deterministic (same data, same statements: same steps), unlike time on a shared
 * machine. A request of the deep key may cost a few steps more (a deeper B-tree) but never a
 * multiple: a statement that read the key's backlog (as the per-key input limit once did, one
 * row per active task) shows as thousands of steps more.
 *
 * On PostgreSQL the same statements are run under EXPLAIN (ANALYZE, BUFFERS) in a rolled-back
 * transaction: no plan may scan `tasks` sequentially, and the pages a request reads (shared
 * buffers hit or read) must not grow with the backlog either. So are the job queue's
 * dead-worker statements, run by every worker process once a lease, against a job backlog.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../src/store/dialect.js';
import { countActiveTasks } from '../src/store/sql/tasks-read.js';
import { DEAD_JOB_WORKERS, RENDER_JOB, RETIRED_JOBS } from '../src/tasks/sources/graphile.js';
import { createTestDatabase, postgresAvailability, type TestDatabase } from './helpers/postgres.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';
import { openSqlite } from '../src/store/sqlite-driver.js';
import { inlineSql, planNodes, sqliteShell, type PlanNode } from './helpers/sql-work.js';

const VIDEO = '/v1/video/generations';
const SHALLOW = 100;
const DEEP = 20_000;

/** A statement the server ran: its compiled text and its values in placeholder order. */
interface Ran {
  readonly name: string;
  readonly text: string;
  readonly values: readonly unknown[];
}

interface RecordingRunner {
  rows(op: Operation<object, unknown>, params: object): unknown;
  first(op: Operation<object, unknown>, params: object): unknown;
  changes(op: Operation<object, unknown>, params: object): unknown;
}

/**
 * Wraps the store's three primitives (every statement of the table, of the group commits and
 * of the claim batches goes through them), recording each statement while `log` is set.
 */
function record(store: unknown, dialect: 'sqlite' | 'postgres'): { start(): void; stop(): Ran[] } {
  const runner = store as RecordingRunner;
  let log: Ran[] | undefined;
  for (const method of ['rows', 'first', 'changes'] as const) {
    const original = runner[method].bind(runner);
    runner[method] = (op, params) => {
      if (log) {
        const sql = op.on(dialect);
        log.push({ name: sql.name, text: sql.text, values: sql.values(params) });
      }
      return original(op, params);
    };
  }
  return {
    start: () => (log = []),
    stop: () => {
      const ran = log ?? [];
      log = undefined;
      return ran;
    },
  };
}

type Body = Record<string, unknown>;

async function call(server: TestServer, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, text: await response.text() };
}

const PLAIN = { model: 'vendora/famw-2.7-t2v', prompt: 'a lighthouse at dusk', duration: 2, resolution: '480p' };
const WITH_DATA_URL = {
  model: 'vendora/famw-2.7-i2v',
  prompt: 'the same, moving',
  duration: 2,
  resolution: '480p',
  image: `data:image/png;base64,${(
    await sharp({ create: { width: 64, height: 48, channels: 3, background: '#336699' } })
      .png()
      .toBuffer()
  ).toString('base64')}`,
};

/** The API operations, each one request for the key whose seeded tasks `ids` names. */
interface Ids {
  readonly queued: string;
  readonly cancel: string;
  readonly completed: string;
}
const OPERATIONS: ReadonlyArray<{ name: string; send(server: TestServer, key: string, ids: Ids): Promise<{ status: number; text: string }> }> = [
  { name: 'create, no data URL', send: (s, k) => call(s, k, 'POST', VIDEO, PLAIN) },
  { name: 'create with a data URL', send: (s, k) => call(s, k, 'POST', VIDEO, WITH_DATA_URL) },
  { name: 'poll, queued task', send: (s, k, ids) => call(s, k, 'GET', `${VIDEO}/${ids.queued}`) },
  { name: 'poll, completed task', send: (s, k, ids) => call(s, k, 'GET', `${VIDEO}/${ids.completed}`) },
  { name: 'list, first page', send: (s, k) => call(s, k, 'GET', `${VIDEO}?limit=20`) },
  { name: 'cancel, queued task', send: (s, k, ids) => call(s, k, 'POST', `${VIDEO}/${ids.cancel}/cancel`) },
  { name: 'events of a completed task', send: (s, k, ids) => call(s, k, 'GET', `${VIDEO}/${ids.completed}/events`) },
];

/** The owner (API key id) of a task created over HTTP with `key`. */
async function ownerOf(server: TestServer, key: string, read: (id: string) => Promise<string>): Promise<string> {
  const created = await call(server, key, 'POST', VIDEO, PLAIN);
  expect(created.status).toBe(200);
  return read(String((JSON.parse(created.text) as Body)['id']));
}

/**
 * `count` tasks of `owner`: 90% queued, 5% processing, 5% completed (with an output), ids in
 * creation order, fair ranks following on; the first of each kind are the ids the operations use.
 */
function seedRows(owner: string, tag: string, count: number): { rows: unknown[][]; ids: Ids } {
  const rows: unknown[][] = [];
  const now = Date.now();
  for (let i = 0; i < count; i += 1) {
    const status = i % 20 === 1 ? 'processing' : i % 20 === 2 ? 'completed' : 'queued';
    const id = `vid_${tag}${String(i).padStart(8, '0')}_seeded_for_growth`;
    const outputs = status === 'completed' ? JSON.stringify([{ key: `outputs/${id}/video.mp4`, contentType: 'video/mp4', bytes: 1000 }]) : '[]';
    rows.push([
      id,
      owner,
      status,
      now - count + i,
      outputs,
      JSON.stringify(PLAIN),
      i,
      status === 'queued' ? 0 : 1,
      status === 'completed' ? now : null,
      status === 'processing' ? now + 3_600_000 : null,
    ]);
  }
  const of = (n: number): string => `vid_${tag}${String(n).padStart(8, '0')}_seeded_for_growth`;
  return { rows, ids: { queued: of(0), cancel: of(3), completed: of(2) } };
}

const SEED_COLUMNS = `(id, kind, model, owner, status, created_at, outputs, params, channel, fair_rank, attempt, completed_at, lease_expires_at, started_at, lease_owner)`;

function inline(ran: Ran): string {
  return inlineSql(ran);
}

interface Steps {
  readonly vm: number;
  readonly fullscan: number;
}

/** Steps per request from the shell's output: the sum over the statements marked `@@<request>`. */
function stepsOf(output: string, requests: number): Steps[] {
  const steps = Array.from({ length: requests }, () => ({ vm: 0, fullscan: 0 }));
  let current: { vm: number; fullscan: number } | undefined;
  let seenVm = true;
  let seenScan = true;
  for (const line of output.split('\n')) {
    const marker = /^@@(\d+)$/.exec(line);
    if (marker) {
      current = steps[Number(marker[1])];
      seenVm = false;
      seenScan = false;
      continue;
    }
    const vm = /^Virtual Machine Steps:\s+(\d+)/.exec(line);
    if (vm && current && !seenVm) {
      current.vm += Number(vm[1]);
      seenVm = true;
    }
    const scan = /^Fullscan Steps:\s+(\d+)/.exec(line);
    if (scan && current && !seenScan) {
      current.fullscan += Number(scan[1]);
      seenScan = true;
    }
  }
  return steps;
}

describe('work per request does not grow with the key backlog (sqlite)', () => {
  let server: TestServer;
  let copyDir: string;
  const measured = new Map<string, { shallow: Ran[]; deep: Ran[] }>();
  let steps: Map<string, { shallow: Steps; deep: Steps }>;
  let shallowOwner = '';
  let deepOwner = '';

  beforeAll(async () => {
    // API only (no workers: the seeded tasks stay as they are); no tasks-in-flight limit (its count
    // is cached for a second per key, so whether a request refreshes it depends on time; its own
    // bound is specified below).
    server = await startServer({
      MEDIAGATE_WORKERS: 'false',
      MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
      MEDIAGATE_KEY_INPUT_BYTES: String(1024 ** 3),
      // The store's work for a poll is measured: a final task's prepared body (a later poll's answer) would hide it.
      MEDIAGATE_FINAL_BODY_CACHE_BYTES: '0',
    });
    const file = join(server.dataDir, 'mediagate.db');
    const db = openSqlite(file);
    const read = (id: string): Promise<string> => Promise.resolve((db.prepare('SELECT owner FROM tasks WHERE id = ?').get(id) as { owner: string }).owner);
    shallowOwner = await ownerOf(server, TEST_KEYS[0], read);
    deepOwner = await ownerOf(server, TEST_KEYS[1], read);
    const shallow = seedRows(shallowOwner, 's', SHALLOW);
    const deep = seedRows(deepOwner, 'd', DEEP);
    const insert = db.prepare(
      `INSERT INTO tasks ${SEED_COLUMNS} VALUES (?, 'video', 'vendora/famw-2.7-t2v', ?, ?, ?, ?, ?, 'sandbox', ?, ?, ?, ?, CASE WHEN ? IS NULL THEN NULL ELSE 1 END, CASE WHEN ? IS NULL THEN NULL ELSE 'w' END)`,
    );
    db.transaction(() => {
      for (const values of [...shallow.rows, ...deep.rows]) insert.run(...values, values[9], values[9]);
    })();
    db.exec('ANALYZE');
    copyDir = await mkdtemp(join(tmpdir(), 'mediagate-growth-'));
    db.exec(`VACUUM INTO '${join(copyDir, 'copy.db')}'`);
    db.close();

    const recorder = record(server.app.store, 'sqlite');
    // Warm-up: key cache, prepared statements, compiled validators.
    for (const operation of OPERATIONS) {
      await operation.send(server, TEST_KEYS[0], {
        queued: shallow.ids.queued,
        cancel: `vid_s${String(5).padStart(8, '0')}_seeded_for_growth`,
        completed: shallow.ids.completed,
      });
    }
    for (const operation of OPERATIONS) {
      for (const [which, key, ids] of [
        ['shallow', TEST_KEYS[0], shallow.ids],
        ['deep', TEST_KEYS[1], deep.ids],
      ] as const) {
        recorder.start();
        const answer = await operation.send(server, key, ids);
        const ran = recorder.stop();
        expect(answer.status, `${operation.name}: ${answer.text.slice(0, 300)}`).toBe(200);
        const entry = measured.get(operation.name) ?? { shallow: [], deep: [] };
        entry[which] = ran;
        measured.set(operation.name, entry);
      }
    }
    const order = [...measured.entries()].flatMap(([name, { shallow: s, deep: d }]) => [
      [name, 'shallow', s],
      [name, 'deep', d],
    ]) as [string, 'shallow' | 'deep', Ran[]][];
    const script = ['.stats on'];
    order.forEach(([, , ran], request) => {
      script.push('BEGIN;');
      for (const statement of ran) script.push(`.print @@${request}`, `${inline(statement)};`);
      script.push('ROLLBACK;');
    });
    const perRequest = stepsOf(await sqliteShell(join(copyDir, 'copy.db'), `${script.join('\n')}\n`), order.length);
    steps = new Map();
    order.forEach(([name, which], request) => {
      const entry = steps.get(name) ?? { shallow: { vm: 0, fullscan: 0 }, deep: { vm: 0, fullscan: 0 } };
      entry[which] = perRequest[request] ?? { vm: 0, fullscan: 0 };
      steps.set(name, entry);
    });
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    if (copyDir) await rm(copyDir, { recursive: true, force: true });
  });

  it.each(OPERATIONS.map((operation) => operation.name))('%s: the same statements, and no more SQLite steps, for 20,000 stored tasks as for 100', (name) => {
    const runs = measured.get(name);
    const cost = steps.get(name);
    if (!runs || !cost) throw new Error(`${name} not measured`);
    expect(runs.deep.map((ran) => ran.name)).toEqual(runs.shallow.map((ran) => ran.name));
    expect(runs.deep.length).toBeGreaterThan(0);
    const detail = `${name}: ${JSON.stringify(cost)} (${runs.deep.map((ran) => ran.name).join(', ')})`;
    expect(cost.shallow.vm, detail).toBeGreaterThan(0);
    // A B-tree one level deeper costs a few steps; reading the backlog would cost thousands.
    expect(cost.deep.vm, detail).toBeLessThanOrEqual(cost.shallow.vm * 1.1 + 20);
    expect(cost.deep.fullscan, detail).toBeLessThanOrEqual(cost.shallow.fullscan + 5);
  });

  it('the tasks-in-flight count (refreshed at most once a second per key) reads at most its limit, whatever the backlog', async () => {
    const sql = countActiveTasks.on('sqlite');
    const count = (owner: string): Ran => ({ name: sql.name, text: sql.text, values: sql.values({ owner, cap: SHALLOW }) });
    const output = await sqliteShell(
      join(copyDir, 'copy.db'),
      ['.stats on', '.print @@0', `${inline(count(shallowOwner))};`, '.print @@1', `${inline(count(deepOwner))};`, ''].join('\n'),
    );
    const [shallow, deep] = stepsOf(output, 2);
    expect(output).toMatch(/^100$/m);
    expect(deep?.vm ?? Infinity).toBeLessThanOrEqual((shallow?.vm ?? 0) * 1.1 + 20);
  });
});

/** Seeds `count` tasks of `owner` on PostgreSQL, shaped as seedRows does. */
async function seedPostgres(client: pg.Client, owner: string, tag: string, count: number): Promise<Ids> {
  const status = `CASE WHEN i % 20 = 1 THEN 'processing' WHEN i % 20 = 2 THEN 'completed' ELSE 'queued' END`;
  const id = `'vid_${tag}' || lpad(i::text, 8, '0') || '_seeded_for_growth'`;
  await client.query(
    `INSERT INTO tasks ${SEED_COLUMNS}
     SELECT ${id}, 'video', 'vendora/famw-2.7-t2v', $1, ${status}, $2::bigint - $3::bigint + i,
            CASE WHEN i % 20 = 2 THEN '[{"key":"outputs/' || ${id} || '/video.mp4","contentType":"video/mp4","bytes":1000}]' ELSE '[]' END,
            $4, 'sandbox', i, CASE WHEN i % 20 IN (1, 2) THEN 1 ELSE 0 END,
            CASE WHEN i % 20 = 2 THEN $2::bigint END, CASE WHEN i % 20 = 1 THEN $2::bigint + 3600000 END,
            CASE WHEN i % 20 IN (1, 2) THEN $2::bigint END, CASE WHEN i % 20 = 1 THEN 'w' END
       FROM generate_series(0, $3::int - 1) AS i`,
    [owner, Date.now(), count, JSON.stringify(PLAIN)],
  );
  const of = (n: number): string => `vid_${tag}${String(n).padStart(8, '0')}_seeded_for_growth`;
  return { queued: of(0), cancel: of(3), completed: of(2) };
}

describe.runIf((await postgresAvailability()).enabled)('work per request does not grow with the key backlog (postgres)', () => {
  let server: TestServer;
  let database: TestDatabase;
  let client: pg.Client;
  const measured = new Map<string, { shallow: Ran[]; deep: Ran[] }>();
  // Put back as it was after the recording (a saved prototype method, called with its client as `this`).
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const originalQuery = pg.Client.prototype.query;

  beforeAll(async () => {
    database = await createTestDatabase();
    server = await startServer({
      DATABASE_URL: database.url,
      MEDIAGATE_WORKERS: 'false',
      MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
      MEDIAGATE_KEY_INPUT_BYTES: String(1024 ** 3),
      MEDIAGATE_FINAL_BODY_CACHE_BYTES: '0',
    });
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const read = async (id: string): Promise<string> =>
      (await client.query<{ owner: string }>('SELECT owner FROM tasks WHERE id = $1', [id])).rows[0]?.owner ?? '';
    const shallowIds = await seedPostgres(client, await ownerOf(server, TEST_KEYS[0], read), 's', SHALLOW);
    const deepIds = await seedPostgres(client, await ownerOf(server, TEST_KEYS[1], read), 'd', DEEP);
    await client.query('ANALYZE');

    // Every statement of the store is a named query config (`mediagate/<operation>`): recorded
    // from the pool's clients while `log` is set.
    let log: Ran[] | undefined;
    const patched = function (this: pg.Client, ...args: unknown[]): unknown {
      const config = args[0] as { name?: string; text?: string; values?: unknown[] } | string;
      if (log && typeof config === 'object' && config.name?.startsWith('mediagate/') && config.text) {
        log.push({ name: config.name.slice('mediagate/'.length), text: config.text, values: config.values ?? [] });
      }
      return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
    };
    pg.Client.prototype.query = patched as typeof pg.Client.prototype.query;
    for (const operation of OPERATIONS) {
      await operation.send(server, TEST_KEYS[0], { ...shallowIds, cancel: `vid_s${String(5).padStart(8, '0')}_seeded_for_growth` });
    }
    for (const operation of OPERATIONS) {
      for (const [which, key, ids] of [
        ['shallow', TEST_KEYS[0], shallowIds],
        ['deep', TEST_KEYS[1], deepIds],
      ] as const) {
        log = [];
        const answer = await operation.send(server, key, ids);
        const ran = log;
        log = undefined;
        expect(answer.status, `${operation.name}: ${answer.text.slice(0, 300)}`).toBe(200);
        const entry = measured.get(operation.name) ?? { shallow: [], deep: [] };
        entry[which] = ran;
        measured.set(operation.name, entry);
      }
    }
    pg.Client.prototype.query = originalQuery;
  }, 180_000);

  afterAll(async () => {
    pg.Client.prototype.query = originalQuery;
    await client?.end().catch(() => {});
    await server?.close();
    await database?.drop();
  });

  /** Each statement under EXPLAIN (ANALYZE, BUFFERS) in a transaction rolled back: the pages it read, and its plan's nodes. */
  async function explain(ran: readonly Ran[]): Promise<{ pages: number; nodes: PlanNode[] }> {
    let pages = 0;
    const nodes: PlanNode[] = [];
    await client.query('BEGIN');
    try {
      for (const statement of ran) {
        // The request's own insert has committed: the replay inserts the same rows under other ids.
        const values = statement.name.startsWith('insert')
          ? statement.values.map((value) =>
              Array.isArray(value) && value.every((item) => typeof item === 'string' && /^(vid|img)_/.test(item))
                ? value.map((id: string) => `${id}_replay`)
                : value,
            )
          : statement.values;
        const result = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement.text}`, [...values]);
        const plan = result.rows[0]?.['QUERY PLAN'][0]?.Plan;
        if (!plan) throw new Error(`no plan for ${statement.name}`);
        pages += (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
        nodes.push(...planNodes(plan));
      }
    } finally {
      await client.query('ROLLBACK');
    }
    return { pages, nodes };
  }

  it.each(OPERATIONS.map((operation) => operation.name))(
    '%s: no sequential scan of tasks, and no more pages read, for 20,000 stored tasks as for 100',
    async (name) => {
      const runs = measured.get(name);
      if (!runs) throw new Error(`${name} not measured`);
      expect(runs.deep.map((ran) => ran.name)).toEqual(runs.shallow.map((ran) => ran.name));
      expect(runs.deep.length).toBeGreaterThan(0);
      await explain(runs.shallow); // the first run of a statement also reads the catalogs
      const shallow = await explain(runs.shallow);
      const deep = await explain(runs.deep);
      const detail = `${name}: ${shallow.pages} -> ${deep.pages} pages (${runs.deep.map((ran) => ran.name).join(', ')})`;
      const scans = deep.nodes.filter((node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'tasks');
      expect(scans, detail).toEqual([]);
      expect(deep.pages, detail).toBeLessThanOrEqual(shallow.pages * 1.5 + 10);
    },
  );
});

/**
 * The job queue's dead-worker pass (tasks/sources/graphile.ts, once a lease in every worker
 * process): finding workers whose jobs stay locked, and removing the jobs retired for new ones.
 * graphile-worker's own indexes cover only waiting jobs, so these statements read the whole job
 * table unless they have indexes of their own; with 20,000 jobs waiting they must read no more
 * pages than with 100, and scan no job table sequentially.
 */
describe.runIf((await postgresAvailability()).enabled)('the dead-worker pass does not grow with the job backlog (postgres)', () => {
  let server: TestServer;
  let database: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    // Any process on PostgreSQL creates the queue's schema; no workers, so nothing takes a job.
    server = await startServer({ DATABASE_URL: database.url, MEDIAGATE_WORKERS: 'false' });
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  }, 60_000);

  afterAll(async () => {
    await client?.end().catch(() => {});
    await server?.close();
    await database?.drop();
  });

  /** `count` waiting render jobs, under keys `<tag><n>`. */
  async function addWaiting(tag: string, count: number): Promise<void> {
    await client.query(
      `SELECT count(*) FROM graphile_worker.add_jobs(ARRAY(
         SELECT ROW($1, json_build_object('id', $2 || i), NULL, now(), NULL, $2 || i, 0, NULL)::graphile_worker.job_spec
           FROM generate_series(1, $3::int) AS i))`,
      [RENDER_JOB, tag, count],
    );
  }

  /** The pages the statement reads and its plan's nodes, under EXPLAIN (ANALYZE, BUFFERS) in a transaction rolled back. */
  async function explainQueue(text: string, values: unknown[]): Promise<{ pages: number; nodes: PlanNode[]; rows: unknown[] }> {
    await client.query('BEGIN');
    try {
      const rows = (await client.query(text, values)).rows;
      await client.query('ROLLBACK');
      await client.query('BEGIN');
      const result = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values);
      const plan = result.rows[0]?.['QUERY PLAN'][0]?.Plan;
      if (!plan) throw new Error('no plan');
      return { pages: (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0), nodes: planNodes(plan), rows };
    } finally {
      await client.query('ROLLBACK');
    }
  }

  it('finds the dead worker and the retired jobs reading no more pages with 20,000 jobs waiting than with 100', async () => {
    const leaseMs = 15_000;
    await addWaiting('shallow', SHALLOW);
    // A dead worker's three jobs (locked an hour ago), and two jobs retired for new ones (no key, attempts spent, unlocked).
    await addWaiting('dead', 3);
    await client.query(
      `UPDATE graphile_worker._private_jobs SET locked_at = now() - interval '1 hour', locked_by = 'dead-worker', attempts = 1 WHERE key LIKE 'dead%'`,
    );
    await addWaiting('retired', 2);
    await client.query(`UPDATE graphile_worker._private_jobs SET key = NULL, attempts = max_attempts WHERE key LIKE 'retired%'`);
    await client.query('ANALYZE graphile_worker._private_jobs');

    const measure = async (): Promise<{ dead: Awaited<ReturnType<typeof explainQueue>>; retired: Awaited<ReturnType<typeof explainQueue>> }> => {
      const dead = await explainQueue(DEAD_JOB_WORKERS, [RENDER_JOB, leaseMs, Date.now()]);
      const retired = await explainQueue(RETIRED_JOBS, [RENDER_JOB]);
      return { dead, retired };
    };
    await measure(); // the first run of a statement also reads the catalogs
    const shallow = await measure();
    await addWaiting('deep', DEEP);
    await client.query('ANALYZE graphile_worker._private_jobs');
    const deep = await measure();

    for (const run of [shallow, deep]) {
      expect(run.dead.rows).toEqual([{ ids: ['dead-worker'] }]);
      expect(run.retired.rows).toEqual([{ removed: 2 }]);
    }
    for (const name of ['dead', 'retired'] as const) {
      const detail = `${name}: ${shallow[name].pages} -> ${deep[name].pages} pages`;
      const scans = deep[name].nodes.filter((node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === '_private_jobs');
      expect(scans, detail).toEqual([]);
      expect(deep[name].pages, detail).toBeLessThanOrEqual(shallow[name].pages * 1.5 + 10);
    }
  }, 120_000);
});

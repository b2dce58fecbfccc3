/**
 * A channel's slots in the store, on each backend (docs/channels.md "Limits"):
 * - the counters of migration 13 (`channel_slots`) equal the tasks that hold a slot, whatever
 *   transition moved them (submission, acceptance, settle, cancel, failover, deletion), and the
 *   migration counts the slots held before it ran;
 * - markSubmitting keeps max_in_flight, gives a waiting key the next free slot while the key that
 *   filled the channel is at its fair share, and lets one key alone use every slot;
 * - the check before a submission does no more work for 10,000 active tasks than for 100: on
 *   SQLite the virtual machine steps the sqlite3 shell reports (`.stats on`), on PostgreSQL the
 *   pages EXPLAIN (ANALYZE, BUFFERS) reports, both deterministic, unlike time on a shared machine
 *   (the way test/growth.test.ts measures requests). Before migration 13 the check counted the
 *   active upstream tasks: 10,000 of them cost ~100 times the steps of 100.
 */
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Dialect, Operation } from '../src/store/dialect.js';
import type { UpstreamStep } from '../src/store/records.js';
import { upstreamSaveParams } from '../src/store/rows.js';
import { waitingKeysCap } from '../src/store/slot-share.js';
import { HOT_PATHS } from '../src/store/sql/hot-paths.js';
import { saveUpstream } from '../src/store/sql/upstream.js';
import type { Store } from '../src/store/store.js';
import { STORE_BACKENDS, type OpenedStore } from './helpers/stores.js';
import { openSqlite } from '../src/store/sqlite-driver.js';
import { inlineSql, planNodes, sqliteShell, type PlanNode } from './helpers/sql-work.js';

const HOLDS = `channel <> 'sandbox' AND status IN ('queued', 'processing') AND upstream_state IS NOT NULL`;

/** Plain SQL on the store's database, beside the store: seeding and reading back. */
interface Raw {
  exec(sql: string): Promise<void>;
  all<R>(sql: string): Promise<R[]>;
  close(): Promise<void>;
}

async function rawOn(location: OpenedStore['location']): Promise<Raw> {
  if ('sqlitePath' in location) {
    const db = openSqlite(location.sqlitePath);
    db.exec('PRAGMA busy_timeout = 5000');
    return {
      exec: (sql) => Promise.resolve(void db.exec(sql)),
      all: <R>(sql: string) => Promise.resolve(db.prepare(sql).all() as R[]),
      close: () => Promise.resolve(void db.close()),
    };
  }
  const client = new pg.Client({ connectionString: location.databaseUrl });
  await client.connect();
  return {
    exec: async (sql) => void (await client.query(sql)),
    all: async <R>(sql: string) => (await client.query(sql)).rows as R[],
    close: () => client.end(),
  };
}

/** `n` queued tasks of `owner` routed to `channel`, ids `<prefix>0`..: one statement (a series). */
function seed(dialect: Dialect, prefix: string, owner: string, channel: string, n: number): string {
  const series =
    dialect === 'sqlite'
      ? `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ${n - 1}) SELECT i FROM s`
      : `SELECT generate_series(0, ${n - 1}) AS i`;
  return `INSERT INTO tasks (id, kind, model, owner, status, progress, created_at, params, attempt, channel, target, next_check_at)
          SELECT '${prefix}' || i, 'video', 'vendora/famw-2.7-t2v', '${owner}', 'queued', 0, 1000 + i, '{}', 1, '${channel}', 0, 1000 FROM (${series}) AS s`;
}

const step = (channel: string): UpstreamStep => ({
  status: 'queued',
  channel,
  target: 0,
  upstreamState: 'submitting',
  upstreamId: null,
  requestId: null,
  since: 5000,
  nextCheckAt: 65_000,
  intervalMs: null,
  progress: null,
  startedAt: null,
});

const mark = (store: Store, id: string, channel: string, owner: string, maxInFlight: number, perKey: number | null = null) =>
  store.markSubmitting(id, 1, step(channel), { maxInFlight, owner, perKey });

describe.each(STORE_BACKENDS)('channel slots on $name', (backend) => {
  let opened: OpenedStore;
  let raw: Raw;
  const dialect: Dialect = backend.name;

  beforeEach(async () => {
    opened = await backend.open();
    raw = await rawOn(opened.location);
  });
  afterEach(async () => {
    await raw.close();
    await opened.cleanup();
  });

  /** The counters next to what they count, both as sorted `channel/owner=n` lines. */
  async function counters(): Promise<{ kept: string[]; counted: string[] }> {
    const line = (row: { channel: string; owner: string; n: number | string }) => `${row.channel}/${row.owner}=${Number(row.n)}`;
    const kept = await raw.all<{ channel: string; owner: string; n: number }>(
      `SELECT channel, owner, held AS n FROM channel_slots WHERE held <> 0 ORDER BY channel, owner`,
    );
    const counted = await raw.all<{ channel: string; owner: string; n: number }>(
      `SELECT channel, owner, count(*) AS n FROM tasks WHERE ${HOLDS} GROUP BY channel, owner ORDER BY channel, owner`,
    );
    return { kept: kept.map(line), counted: counted.map(line) };
  }

  it('keeps the slot counters equal to the tasks holding slots, whatever the transition', async () => {
    await raw.exec(seed(dialect, 'a', 'key-a', 'wan', 8));
    await raw.exec(seed(dialect, 'b', 'key-b', 'wan', 3));
    for (const id of ['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'b0', 'b1'])
      expect(await mark(opened.store, id, 'wan', id.startsWith('a') ? 'key-a' : 'key-b', 100)).toBe('marked');
    expect(await counters()).toEqual({ kept: ['wan/key-a=6', 'wan/key-b=2'], counted: ['wan/key-a=6', 'wan/key-b=2'] });
    await raw.exec(`UPDATE tasks SET upstream_state = 'accepted', status = 'processing' WHERE id IN ('a0', 'a1', 'b0')`); // accepted: still held
    await raw.exec(`UPDATE tasks SET status = 'completed', completed_at = 9000, upstream_state = NULL WHERE id = 'a0'`);
    await raw.exec(`UPDATE tasks SET status = 'failed', completed_at = 9000, upstream_state = NULL WHERE id = 'a1'`);
    await raw.exec(`UPDATE tasks SET status = 'cancelled', completed_at = 9000 WHERE id = 'a2'`); // upstream_state kept for the cancel
    await raw.exec(`UPDATE tasks SET upstream_state = NULL WHERE id = 'a3'`); // reconciled absent: waits again
    await raw.exec(`UPDATE tasks SET channel = 'ark', target = 1 WHERE id = 'a4'`); // moved while held
    await raw.exec(`UPDATE tasks SET channel = 'sandbox', upstream_state = NULL, next_check_at = NULL WHERE id = 'b1'`); // failover
    await raw.exec(`DELETE FROM tasks WHERE id = 'b0'`);
    expect(await counters()).toEqual({ kept: ['ark/key-a=1', 'wan/key-a=1'], counted: ['ark/key-a=1', 'wan/key-a=1'] });
  });

  it('counts the slots already held when migration 13 runs on a database in use', async () => {
    await raw.exec(seed(dialect, 'a', 'key-a', 'wan', 4));
    await raw.exec(seed(dialect, 'b', 'key-b', 'ark', 2));
    // As if the database predated migration 13: its objects gone, slots taken without the trigger.
    const triggers = dialect === 'postgres' ? ['tasks_slots ON tasks', 'tasks_slots_delete ON tasks'] : ['tasks_slots', 'tasks_slots_delete'];
    for (const trigger of triggers) await raw.exec(`DROP TRIGGER ${trigger}`);
    if (dialect === 'postgres') await raw.exec(`DROP FUNCTION mediagate_channel_slots()`);
    await raw.exec(`DROP INDEX tasks_channel_waiting`);
    await raw.exec(`DROP TABLE channel_slots`);
    await raw.exec(`DELETE FROM mediagate_migrations WHERE version = 13`);
    await raw.exec(`UPDATE tasks SET upstream_state = 'accepted', status = 'processing' WHERE id IN ('a0', 'a1', 'a2', 'b0')`);
    await opened.backend.migrate();
    expect(await counters()).toEqual({ kept: ['ark/key-b=1', 'wan/key-a=3'], counted: ['ark/key-b=1', 'wan/key-a=3'] });
    // And the trigger is back.
    await raw.exec(`UPDATE tasks SET status = 'completed', completed_at = 9000, upstream_state = NULL WHERE id = 'a0'`);
    expect(await counters()).toEqual({ kept: ['ark/key-b=1', 'wan/key-a=2'], counted: ['ark/key-b=1', 'wan/key-a=2'] });
  });

  it('keeps max_in_flight, and gives the next free slot to a waiting key, not to the key that filled the channel', async () => {
    await raw.exec(seed(dialect, 'a', 'key-a', 'wan', 6));
    for (const id of ['a0', 'a1', 'a2']) expect(await mark(opened.store, id, 'wan', 'key-a', 3)).toBe('marked');
    expect(await mark(opened.store, 'a3', 'wan', 'key-a', 3)).toBe('full');
    await raw.exec(seed(dialect, 'b', 'key-b', 'wan', 2));
    expect(await mark(opened.store, 'b0', 'wan', 'key-b', 3)).toBe('full'); // held slots are not taken back
    // One of key-a's tasks ends: key-a is at its share (ceil(3 / 2) = 2) while key-b waits.
    await raw.exec(`UPDATE tasks SET status = 'completed', completed_at = 9000, upstream_state = NULL WHERE id = 'a0'`);
    // The unlocked check the scheduler reads before booking a submit_per_s slot says the same.
    expect(await opened.store.hasSlot('wan', { maxInFlight: 3, owner: 'key-a', perKey: null })).toBe(false);
    expect(await opened.store.hasSlot('wan', { maxInFlight: 3, owner: 'key-b', perKey: null })).toBe(true);
    expect(await mark(opened.store, 'a3', 'wan', 'key-a', 3)).toBe('full');
    expect(await mark(opened.store, 'b0', 'wan', 'key-b', 3)).toBe('marked');
    expect(await opened.store.hasSlot('wan', { maxInFlight: 3, owner: 'key-b', perKey: null })).toBe(false);
    // key-a holds 1 and key-b none, key-b waiting: below the computed share (2), key-a may take a
    // slot; a fixed max_in_flight_per_key of 1 replaces the share and holds it back.
    await raw.exec(`UPDATE tasks SET status = 'completed', completed_at = 9000, upstream_state = NULL WHERE id IN ('a1', 'b0')`);
    expect(await mark(opened.store, 'a3', 'wan', 'key-a', 3, 1)).toBe('full');
    expect(await mark(opened.store, 'a3', 'wan', 'key-a', 3)).toBe('marked');
  });

  it('gives one key alone every slot of an idle channel', async () => {
    await raw.exec(seed(dialect, 'c', 'key-c', 'ark', 5));
    await raw.exec(seed(dialect, 'w', 'key-d', 'wan', 5)); // another channel's queue changes nothing
    for (const id of ['c0', 'c1', 'c2', 'c3']) expect(await mark(opened.store, id, 'ark', 'key-c', 4)).toBe('marked');
    expect(await mark(opened.store, 'c4', 'ark', 'key-c', 4)).toBe('full');
  });
});

// -----------------------------------------------------------------------------------------------
// The cost of the check, 100 active tasks against 10,000
// -----------------------------------------------------------------------------------------------

/** A statement as compiled for one dialect, with its values. */
interface Compiled {
  readonly name: string;
  readonly text: string;
  readonly values: readonly unknown[];
}

const compile = <P extends object>(op: Operation<P, unknown>, params: P, dialect: Dialect): Compiled => {
  const sql = op.on(dialect);
  return { name: sql.name, text: sql.text, values: sql.values(params) };
};

/**
 * What markSubmitting runs for a task of the key holding slots, on a channel far from full: the
 * slot holders, the waiting keys (the key holds a slot, so they are read), and the `submitting`
 * write, whose trigger moves the counter.
 */
function checkAndMark(dialect: Dialect, id: string): Compiled[] {
  const maxInFlight = 50_000;
  return [
    compile(HOT_PATHS.channelHolders, { channel: 'wan' }, dialect),
    compile(HOT_PATHS.channelWaitingKeys, { channel: 'wan', cap: waitingKeysCap(maxInFlight) }, dialect),
    compile(saveUpstream, upstreamSaveParams(id, 1, step('wan')), dialect),
  ];
}

/** `held` tasks of key-a holding slots, `queued` more waiting, and one task of key-b waiting: held + queued + 1 active. */
async function fill(raw: Raw, dialect: Dialect, held: number, queued: number): Promise<void> {
  await raw.exec(seed(dialect, 'h', 'key-a', 'wan', held));
  await raw.exec(seed(dialect, 'q', 'key-a', 'wan', queued));
  await raw.exec(seed(dialect, 'b', 'key-b', 'wan', 1));
  // Through the trigger, as a submission would: the counters are the migration's, not seeded.
  await raw.exec(`UPDATE tasks SET upstream_state = 'accepted', status = 'processing' WHERE id LIKE 'h%'`);
  // PostgreSQL: the visibility map set, as autovacuum leaves it, so index-only scans stay index-only.
  await raw.exec(dialect === 'postgres' ? `VACUUM ANALYZE tasks` : `ANALYZE`);
}

/** The sqlite3 shell's virtual machine steps for the statements, run in a transaction rolled back. */
async function sqliteSteps(file: string, statements: readonly Compiled[]): Promise<number> {
  const script = ['.stats on', 'BEGIN;', ...statements.map((s) => `${inlineSql(s)};`), 'ROLLBACK;', ''].join('\n');
  const output = await sqliteShell(file, script);
  let steps = 0;
  for (const match of output.matchAll(/^Virtual Machine Steps:\s+(\d+)/gm)) steps += Number(match[1]);
  return steps;
}

/** The pages PostgreSQL reads for the statements (EXPLAIN ANALYZE, BUFFERS; rolled back), and every plan node. */
async function postgresPages(url: string, statements: readonly Compiled[]): Promise<{ pages: number; nodes: PlanNode[] }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let pages = 0;
  const nodes: PlanNode[] = [];
  try {
    await client.query('BEGIN');
    for (const statement of statements) {
      const result = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement.text}`, [
        ...statement.values,
      ]);
      const plan = result.rows[0]?.['QUERY PLAN'][0]?.Plan;
      if (!plan) throw new Error(`no plan for ${statement.name}`);
      pages += (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
      nodes.push(...planNodes(plan));
    }
  } finally {
    await client.query('ROLLBACK').catch(() => {});
    await client.end();
  }
  return { pages, nodes };
}

/** The SQLite measure needs the sqlite3 shell (`.stats on`); CI installs it (.ci/run), so there it must run. */
const SQLITE_SHELL = spawnSync('sqlite3', ['-version']).status === 0;
if (!SQLITE_SHELL && process.env['CI'])
  throw new Error('the sqlite3 shell is not installed, and under CI the SQLite cost spec must run (apt-get install sqlite3)');
const skipSqliteCost = (name: string): boolean => name === 'sqlite' && !SQLITE_SHELL;

describe.each(STORE_BACKENDS)('the check before a submission on $name', (backend) => {
  const dialect: Dialect = backend.name;

  /** The check's cost on a fresh database holding `held` + `queued` + 1 active tasks on the channel. */
  async function costWith(held: number, queued: number): Promise<{ cost: number; scans: PlanNode[] }> {
    const opened = await backend.open();
    const raw = await rawOn(opened.location);
    try {
      await fill(raw, dialect, held, queued);
      const statements = checkAndMark(dialect, 'q0');
      if ('sqlitePath' in opened.location) return { cost: await sqliteSteps(opened.location.sqlitePath, statements), scans: [] };
      await postgresPages(opened.location.databaseUrl, statements); // the first run also reads the catalogs
      const { pages, nodes } = await postgresPages(opened.location.databaseUrl, statements);
      return { cost: pages, scans: nodes.filter((node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'tasks') };
    } finally {
      await raw.close();
      await opened.cleanup();
    }
  }

  it.skipIf(skipSqliteCost(backend.name))(
    'does no more work with 10,000 active tasks on the channel than with 100 (SQLite: skipped without the sqlite3 shell)',
    async () => {
      const shallow = await costWith(50, 50);
      const deep = await costWith(5_000, 5_000);
      const detail = `${dialect === 'sqlite' ? 'VM steps' : 'pages'}: ${shallow.cost} with 101 active tasks, ${deep.cost} with 10,001`;
      expect(shallow.cost, detail).toBeGreaterThan(0);
      expect(deep.scans, detail).toEqual([]);
      // A deeper B-tree may cost a little more per seek, never a multiple (a count of the tasks: x100).
      expect(deep.cost, detail).toBeLessThanOrEqual(shallow.cost * 1.2 + 20);
    },
    120_000,
  );
});

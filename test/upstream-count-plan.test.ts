// The in-flight count runs before every upstream submission (max_in_flight): it must read the
// partial index of active upstream tasks, not scan every task ever stored (measured by the
// bench's upstream phase: 48 ms a count with 100,000 tasks stored, 6 ms through the index).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/store/sqlite.js';
import { channelFull, countUpstreamInFlight } from '../src/store/sql/upstream.js';

let dir = '';
let db: BetterSqlite3.Database;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediagate-count-plan-'));
  const store = openSqliteStore({ path: join(dir, 'mediagate.db'), synchronous: 'NORMAL' });
  await store.migrate();
  await store.close();
  db = new BetterSqlite3(join(dir, 'mediagate.db'));
});

afterAll(async () => {
  db?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('count of a channel in-flight upstream tasks (SQLite)', () => {
  it('reads the partial index of active upstream tasks, never the whole table', () => {
    const { text } = countUpstreamInFlight.on('sqlite');
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all('wan') as { detail: string }[]).map((row) => row.detail);
    expect(plan.join('; ')).toMatch(/USING (COVERING )?INDEX tasks_upstream_due/);
    expect(plan.some((detail) => /^SCAN t$/.test(detail))).toBe(false);
  });

  it('the check before each submission reads the same index in both of its counts', () => {
    const { text } = channelFull.on('sqlite');
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(5, 'wan', 5, 5) as { detail: string }[]).map((row) => row.detail);
    expect(plan.filter((detail) => /USING (COVERING )?INDEX tasks_upstream_due/.test(detail))).toHaveLength(2);
    expect(plan.some((detail) => /^SCAN t$/.test(detail))).toBe(false);
  });

  it('says full exactly when the channel holds max tasks upstream, whatever other channels hold', () => {
    const insert = db.prepare(
      `INSERT INTO tasks (id, kind, model, owner, status, progress, created_at, params, attempt, channel, target, upstream_state, next_check_at)
       VALUES (?, 'video', 'm', 'o', ?, 0, 1, '{}', 1, ?, 0, ?, 1)`,
    );
    const statement = db.prepare(channelFull.on('sqlite').text);
    const full = (channel: string, max: number): number => (statement.get(max, channel, max, max) as { full: number }).full;
    insert.run('a1', 'processing', 'wan', 'accepted');
    insert.run('a2', 'queued', 'wan', 'submitting');
    insert.run('a3', 'queued', 'wan', null); // routed to wan, not yet submitted: holds no slot
    insert.run('b1', 'processing', 'ark', 'accepted');
    insert.run('b2', 'processing', 'ark', 'accepted');
    insert.run('s1', 'queued', 'sandbox', null);
    expect(full('wan', 10)).toBe(0); // 5 active upstream tasks in all: fewer than 10
    expect(full('wan', 3)).toBe(0); // 5 in all, but wan holds 2
    expect(full('wan', 2)).toBe(1);
    expect(full('ark', 2)).toBe(1);
    expect(full('ark', 3)).toBe(0);
    db.prepare(`UPDATE tasks SET status = 'completed', completed_at = 1795651748000 WHERE id = 'a1'`).run();
    expect(full('wan', 2)).toBe(0);
  });
});

// The in-flight count runs before every upstream submission (max_in_flight): it must read the
// partial index of active upstream tasks, not scan every task ever stored (measured by the
// bench's upstream phase: 48 ms a count with 100,000 tasks stored, 6 ms through the index).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/tasks/store/sqlite.js';
import { countUpstreamInFlight } from '../src/tasks/store/sql/upstream.js';

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
});

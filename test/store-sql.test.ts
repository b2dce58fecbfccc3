import { describe, expect, it } from 'vitest';
import { graphileJobs } from '../src/tasks/sources/graphile.js';
import { DIALECTS } from '../src/store/dialect.js';
import { allOperations } from '../src/store/sql/index.js';
import { operations as table } from '../src/store/operations.js';
import { PostgresStore } from '../src/store/postgres-store.js';
import { SqliteStore } from '../src/store/sqlite-store.js';

/**
 * The SQL of every store operation, per dialect, as the drivers receive it: one file each
 * under test/__snapshots__/store-sql/, so a change to any statement shows in review as a diff
 * of that statement.
 */
const operations = allOperations(graphileJobs);

describe('store SQL', () => {
  it('names each operation once', () => {
    const names = operations.map((op) => op.name);
    expect(new Set(names).size).toBe(names.length);
  });

  for (const dialect of DIALECTS) {
    describe(dialect, () => {
      for (const op of operations.filter((candidate) => candidate.dialects.includes(dialect))) {
        it(op.name, async () => {
          const { text } = op.on(dialect);
          // Every named placeholder was replaced by the driver's own.
          expect(text).not.toMatch(/@[A-Za-z_]/);
          expect(text).not.toMatch(dialect === 'sqlite' ? /\$\d/ : /\?/);
          await expect(`${text}\n`).toMatchFileSnapshot(`__snapshots__/store-sql/${dialect}/${op.name}.sql`);
        });
      }
    });
  }
});

/**
 * A new operation is two edits, its statement and its row in the table (operations.ts): the row
 * alone must make it a method of both stores, with its statements snapshotted.
 */
describe('the operation table', () => {
  it('gives every row to both runners, neither of which writes its own', () => {
    for (const store of [SqliteStore, PostgresStore]) {
      const own = Object.getOwnPropertyNames(store.prototype);
      expect(own.filter((name) => Object.hasOwn(table, name))).toEqual([]);
      for (const name of Object.keys(table)) expect(typeof (store.prototype as unknown as Record<string, unknown>)[name]).toBe('function');
    }
  });

  it('snapshots every statement a row runs', () => {
    const listed = new Set(allOperations(graphileJobs));
    const unlisted = Object.entries(table).flatMap(([name, row]) => row.statements.filter((op) => !listed.has(op)).map((op) => `${name}: ${op.name}`));
    expect(unlisted).toEqual([]);
    expect(Object.keys(table).length).toBeGreaterThan(30);
  });
});

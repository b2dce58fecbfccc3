import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
const HERE = dirname(fileURLToPath(import.meta.url));
const STORE = join(HERE, '..', 'src', 'store');
const SNAPSHOTS = join(HERE, '__snapshots__', 'store-sql');

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

  it('snapshots every statement the table and the runners import', async () => {
    // What a runner or the table imports from sql/ is what it can run: each must be in the
    // snapshotted list (sql/index.ts), or a statement could change without a diff in review.
    const listed = new Set(operations.map((op) => op.name));
    const sources = ['operations.ts', 'sqlite-store.ts', 'postgres-store.ts'].map((file) => readFileSync(join(STORE, file), 'utf8'));
    const missing: string[] = [];
    let imported = 0;
    for (const source of sources) {
      for (const match of source.matchAll(/import \{([^}]*)\} from '\.\/sql\/([\w-]+)\.js'/g)) {
        const module = (await import(join(STORE, 'sql', `${match[2] ?? ''}.ts`))) as Record<string, unknown>;
        for (const name of (match[1] ?? '').split(',').map((part) => part.trim().replace(/^type\s+/, ''))) {
          const value = module[name];
          const op = typeof value === 'function' ? (value as (jobs: typeof graphileJobs) => unknown)(graphileJobs) : value;
          if (typeof op !== 'object' || op === null) continue;
          // An object of rows (sql/hot-paths.ts) is as many operations as it has rows.
          const ops: object[] = 'on' in op ? [op] : Object.values(op).filter((row): row is object => typeof row === 'object' && row !== null && 'on' in row);
          for (const one of ops) {
            if (!('name' in one)) continue;
            imported += 1;
            if (!listed.has(String(one.name))) missing.push(`${match[2] ?? ''}.${name} (${String(one.name)})`);
          }
        }
      }
    }
    expect(missing).toEqual([]);
    expect(imported).toBeGreaterThan(30);
  });

  it('keeps no snapshot of a statement that is gone', () => {
    for (const dialect of DIALECTS) {
      const names = new Set(operations.filter((op) => op.dialects.includes(dialect)).map((op) => `${op.name}.sql`));
      const files = readdirSync(join(SNAPSHOTS, dialect));
      expect(files.filter((file) => !names.has(file))).toEqual([]);
    }
  });
});

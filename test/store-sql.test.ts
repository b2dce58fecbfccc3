import { describe, expect, it } from 'vitest';
import { graphileJobs } from '../src/tasks/sources/graphile.js';
import { DIALECTS } from '../src/store/dialect.js';
import { allOperations } from '../src/store/sql/index.js';

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

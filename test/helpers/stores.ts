import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/tasks/store/sqlite.js';
import type { TaskStore } from '../../src/tasks/store/store.js';

export interface StoreFixture {
  readonly name: string;
  open(): Promise<{ store: TaskStore; cleanup(): Promise<void> }>;
}

/** Every backend the store suite runs against; each open() is a fresh, isolated database. */
export const STORE_BACKENDS: readonly StoreFixture[] = [
  {
    name: 'sqlite',
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'mediagate-store-'));
      const store = openSqliteStore({ path: join(dir, 'test.db'), synchronous: 'NORMAL' });
      await store.migrate();
      return {
        store,
        async cleanup() {
          await store.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

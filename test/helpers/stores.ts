import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBackend, type TaskBackend } from '../../src/tasks/backend.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, postgresAvailability, selectedBackends } from './postgres.js';

export interface OpenedStore {
  readonly store: Store;
  /** The backend the store belongs to: its task source is the one the service uses with it. */
  readonly backend: TaskBackend;
  /** Where the database is: a SQLite file, or a PostgreSQL URL (for specs that read it directly). */
  readonly location: { readonly sqlitePath: string } | { readonly databaseUrl: string };
  readonly cleanup: () => Promise<void>;
}

export interface StoreFixture {
  readonly name: 'sqlite' | 'postgres';
  open(): Promise<OpenedStore>;
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

const sqlite: StoreFixture = {
  name: 'sqlite',
  async open() {
    const dir = await mkdtemp(join(tmpdir(), 'mediagate-store-'));
    const sqlitePath = join(dir, 'test.db');
    const backend = openBackend({
      databaseUrl: undefined,
      pgPoolSize: 4,
      sqlitePath,
      sqliteSynchronous: 'NORMAL',
      log: silent,
    });
    await backend.migrate();
    return {
      store: backend.store,
      backend,
      location: { sqlitePath },
      async cleanup() {
        await backend.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
};

/** A fresh database per open(), with the store's and the job queue's schemas; dropped by cleanup(). */
const postgres: StoreFixture = {
  name: 'postgres',
  async open() {
    const database = await createTestDatabase();
    const backend = openBackend({ databaseUrl: database.url, pgPoolSize: 8, sqlitePath: '', sqliteSynchronous: 'NORMAL', log: silent });
    await backend.migrate();
    return {
      store: backend.store,
      backend,
      location: { databaseUrl: database.url },
      async cleanup() {
        await backend.close();
        await database.drop();
      },
    };
  },
};

/**
 * Every backend the store and worker specs run against (MEDIAGATE_TEST_BACKENDS; PostgreSQL
 * when reachable, see helpers/postgres.ts); each open() is a fresh, isolated database.
 */
export const STORE_BACKENDS: readonly StoreFixture[] = [
  ...(selectedBackends().includes('sqlite') ? [sqlite] : []),
  ...((await postgresAvailability()).enabled ? [postgres] : []),
];

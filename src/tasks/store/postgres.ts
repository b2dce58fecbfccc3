import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { KyselyTaskStore } from './kysely-store.js';
import type { Database } from './schema.js';
import type { JobQueueSql, TaskStore } from './store.js';

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` (DATABASE_URL). */
  readonly connectionString: string;
  /** Connections this process keeps at most (the job queue's worker shares them). */
  readonly poolSize: number;
  /** The job queue whose jobs the store adds with task changes (see JobQueueSql). */
  readonly jobs?: JobQueueSql;
  /** A connection failed outside any query (server restart, failover); the pool replaces it. */
  readonly onError: (error: Error) => void;
}

export interface PostgresStore {
  readonly store: TaskStore;
  /** The connection pool, shared with the job queue's worker; the store's close() ends it. */
  readonly pool: pg.Pool;
}

/**
 * The TaskStore on PostgreSQL: the same queries as SQLite (kysely-store.ts) over a `pg` pool.
 * BIGINT columns arrive as strings and are normalised in rows.ts.
 */
export function openPostgresStore(options: PostgresOptions): PostgresStore {
  const pool = new pg.Pool({ connectionString: options.connectionString, max: options.poolSize, application_name: 'mediagate' });
  // Without these, an idle connection that drops emits an unhandled 'error' and ends the process.
  pool.on('error', options.onError);
  pool.on('connect', (client) => client.on('error', options.onError));
  // Kysely's destroy() ends the pool.
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { store: new KyselyTaskStore(db, 'postgres', undefined, options.jobs), pool };
}

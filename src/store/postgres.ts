import pg from 'pg';
import { PostgresStore } from './postgres-store.js';
import type { JobQueueSql, Store } from './store.js';

/** The longest wait for a connection from the pool (docs/operations/running.md, "When a dependency fails"). */
export const CONNECT_TIMEOUT_MS = 5000;

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

export interface OpenedPostgres {
  readonly store: Store;
  /** The connection pool, shared with the job queue's worker; the store's close() ends it. */
  readonly pool: pg.Pool;
}

/**
 * The store on PostgreSQL over a `pg` pool: the statements of sql/ in their PostgreSQL form
 * (dialect.ts).
 */
export function openPostgresStore(options: PostgresOptions): OpenedPostgres {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize,
    application_name: 'mediagate',
    // A request waits this long at most for a connection (a new one, or the pool's turn) before
    // it fails, as an outage (a 503 with Retry-After, outages.ts): without it, a database that
    // accepts no connections makes every request hang.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // Prepared (named) statements, ours and graphile-worker's, planned for the parameters and
    // table sizes of each execution. Left to PostgreSQL, a statement prepared while its table
    // was nearly empty (a fresh database, a quiet hour) keeps a generic plan that scans the
    // whole table once it has grown; measured in the PostgreSQL pipeline of `npm run bench`
    // (20k tasks): graphile-worker's batched job deletion at 1.0 ms a statement instead of
    // 0.2 ms, our batched claim at 3.5 ms instead of 0.3 ms. Planning each execution of these
    // small statements costs less than that.
    // (An `options` parameter in DATABASE_URL replaces this one; PGOPTIONS is kept.)
    options: [process.env['PGOPTIONS'], '-c plan_cache_mode=force_custom_plan'].filter(Boolean).join(' '),
  });
  // Without these, an idle connection that drops emits an unhandled 'error' and ends the process.
  pool.on('error', options.onError);
  pool.on('connect', (client) => client.on('error', options.onError));
  return { store: new PostgresStore(pool, options.jobs), pool };
}

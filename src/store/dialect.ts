/**
 * The one seam between the two databases. Every statement of the store is written once, in
 * `sql/`, as a text with `@name` placeholders; what differs between SQLite and PostgreSQL is
 * named here and nowhere else:
 *
 * - Placeholders: SQLite binds `?` in order (better-sqlite3 has no numbered `?N` with reuse), so a
 *   name used twice is bound twice; pg binds `$N`, and a name used twice reuses its number.
 * - Row locks: PostgreSQL claimers run concurrently, so the rows a claim picks are locked with
 *   `FOR UPDATE SKIP LOCKED` (two claimers never pick the same row, neither waits); SQLite runs
 *   one writer at a time, so the same statement without it is already atomic.
 * - Batches: on PostgreSQL every statement is a round trip and a commit, so the group commits
 *   (group-commit.ts) send one statement over `unnest` of arrays; SQLite has no arrays and no
 *   round trip, so it runs the one-row statement per call inside one transaction. Both forms
 *   are built from the same SET and guard fragments (sql/claim.ts, sql/settle.ts).
 * - Arrays: pg binds a JS array as a PostgreSQL array (`@ids::text[]`, `unnest`); SQLite has
 *   none, so compile() binds an array as its JSON text, which a statement reads with
 *   `json_each`. One parameter type serves both forms of a row of sql/hot-paths.ts.
 * - BIGINT: pg returns BIGINT columns and count(*) as strings; rows.ts normalises them.
 * - RETURNING: both support it (SQLite >= 3.35). Statements list their columns instead of `*`,
 *   because a prepared PostgreSQL statement returning `*` fails ("cached plan must not change
 *   result type") once another process's migration adds a column.
 * - Advisory locks (PostgreSQL only): migrations and the reaper take a transaction-scoped lock
 *   so that several processes do them one at a time; SQLite has one process per file writing.
 * - A job queue (PostgreSQL only, JobQueueSql): a statement that makes a task runnable adds its
 *   job in the same statement, so a committed runnable task always has a job.
 * - Types in DDL: SQLite INTEGER is 64-bit; PostgreSQL needs BIGINT (migrations.ts).
 * - Text order: the list's id order is byte order, named per dialect (`bytewise`).
 *
 * Each statement is prepared once per connection and reused: SQLite statements (through
 * sqlite-driver.ts), named pg statements on PostgreSQL. The text executed is the text
 * snapshotted by test/store-sql.test.ts, for each dialect.
 */
export type Dialect = 'sqlite' | 'postgres';

/**
 * A job queue that shares the store's PostgreSQL database, as the store's SQL sees it: SQL text
 * fragments that the store's statements embed, so that a job is added in the same statement as
 * the task change it announces. Jobs only carry task ids; task state stays in `tasks`.
 */
export interface JobQueueSql {
  /**
   * A set-returning SQL expression that adds one job per row of `relation` (the name of a CTE
   * with `id`, `created_at`, `owner`, `priority` and `fetches_inputs`, such as the tasks an INSERT
   * returned): `priority` orders jobs before their creation time (lower first: fair order
   * between keys), `owner` lets a worker process skip the jobs of a key it holds enough of, and
   * `fetches_inputs` says the task has inputs to fetch before its render (worker-pool.ts).
   */
  addJobs(relation: string): string;
  /**
   * A condition on the task aliased `task`: a live job will deliver it (see
   * TaskStore.requeueStranded); it may use the parameter `@staleMs`.
   */
  liveJob(task: string): string;
}

export const DIALECTS: readonly Dialect[] = ['sqlite', 'postgres'];

/** `FOR UPDATE SKIP LOCKED` where concurrent claimers exist (see above). */
export function skipLocked(dialect: Dialect): string {
  return dialect === 'postgres' ? 'FOR UPDATE SKIP LOCKED' : '';
}

/**
 * Byte order for text: task ids sort by creation only byte-wise, and a PostgreSQL database's
 * default collation may be a locale's (where `-` and `_` are nearly ignored).
 */
export function bytewise(dialect: Dialect): string {
  return dialect === 'postgres' ? 'COLLATE "C"' : 'COLLATE BINARY';
}

/** A 64-bit integer column type in DDL. */
export function bigint(dialect: Dialect): string {
  return dialect === 'postgres' ? 'BIGINT' : 'INTEGER';
}

/** One statement compiled for one dialect: its text and how to bind named parameters to it. */
export interface Sql<P extends object, R> {
  /** Unique per dialect: the name of the prepared statement on PostgreSQL. */
  readonly name: string;
  readonly dialect: Dialect;
  readonly text: string;
  /** Parameter values in placeholder order. */
  values(params: P): unknown[];
  /** The row type (never read; carries R). */
  readonly row?: R;
}

/** A store operation's statement, written once, compiled for each dialect it runs on. */
export interface Operation<P extends object, R> {
  readonly name: string;
  readonly dialects: readonly Dialect[];
  on(dialect: Dialect): Sql<P, R>;
}

/** An operation as a reader sees it: its name and its text per dialect (the SQL spec lists them). */
export interface OperationText {
  readonly name: string;
  readonly dialects: readonly Dialect[];
  on(dialect: Dialect): { readonly name: string; readonly text: string };
}

const PLACEHOLDER = /@([A-Za-z_][A-Za-z0-9_]*)/g;

export function compile<P extends object, R>(name: string, dialect: Dialect, source: string): Sql<P, R> {
  const order: string[] = [];
  const text = source.replace(PLACEHOLDER, (_, key: string) => {
    if (dialect === 'sqlite') {
      order.push(key);
      return '?';
    }
    let index = order.indexOf(key);
    if (index < 0) index = order.push(key) - 1;
    return `$${index + 1}`;
  });
  const keys = order as (keyof P)[];
  const values =
    dialect === 'sqlite'
      ? (params: P): unknown[] =>
          keys.map((key) => {
            const value = params[key];
            return Array.isArray(value) ? JSON.stringify(value) : value;
          })
      : (params: P): unknown[] => keys.map((key) => params[key]);
  return { name, dialect, text, values };
}

/**
 * Declares an operation: `source` gives its text for a dialect (most ignore the argument).
 * `dialects` lists where it runs, for operations that exist in one dialect only (the batch
 * forms and the job-queue statements of PostgreSQL).
 */
export function operation<P extends object, R = never>(
  name: string,
  source: (dialect: Dialect) => string,
  dialects: readonly Dialect[] = DIALECTS,
): Operation<P, R> {
  const compiled = new Map<Dialect, Sql<P, R>>();
  return {
    name,
    dialects,
    on(dialect) {
      if (!dialects.includes(dialect)) throw new Error(`${name} has no ${dialect} form`);
      let sql = compiled.get(dialect);
      if (!sql) {
        sql = compile<P, R>(name, dialect, source(dialect));
        compiled.set(dialect, sql);
      }
      return sql;
    },
  };
}

/**
 * One operation's text in each dialect, side by side (sql/hot-paths.ts): a dialect left out has
 * no form of it (the batch forms of PostgreSQL, the one-row forms of SQLite's group commits).
 */
export type DialectTexts = { readonly [D in Dialect]?: string };

/** Declares an operation from its row: its text per dialect, written next to each other. */
export function dialectOperation<P extends object, R = never>(name: string, texts: DialectTexts): Operation<P, R> {
  const dialects = DIALECTS.filter((dialect) => texts[dialect] !== undefined);
  return operation<P, R>(name, (dialect) => texts[dialect] ?? '', dialects);
}

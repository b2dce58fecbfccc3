import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The one seam between the store and a SQLite library. Two drivers, chosen once per connection:
 *
 * - `node:sqlite`, Node's built-in (DatabaseSync; unflagged from Node 22.13), wherever it exists.
 *   Nothing to compile, and it is the only driver that runs on Node 24.
 * - `better-sqlite3` 12 (an optional dependency) on Node 20, which has no `node:sqlite`. It is
 *   never loaded on Node 24 or later: there its statements abort the process when the garbage
 *   collector finalizes them (`Assertion failed: (env) != nullptr` in
 *   `RemoveEnvironmentCleanupHook`, WiseLibs/better-sqlite3#1515), and better-sqlite3 13, which
 *   fixes that, segfaults on Node 20.
 *
 * The interface is what the store uses and no more: positional `?` parameters (dialect.ts
 * compiles `@name` to `?`), rows as plain objects with numbers (both drivers read INTEGER as a
 * number and bind a JS number as REAL), the number of rows a statement changed, and
 * transactions with better-sqlite3's semantics (BEGIN DEFERRED; a nested call is a savepoint;
 * rolled back and rethrown when the function throws). Both drivers enforce foreign keys and
 * reject double-quoted string literals by default.
 */
export type SqliteDriverName = 'node:sqlite' | 'better-sqlite3';

export interface SqliteStatement {
  all(...values: unknown[]): unknown[];
  get(...values: unknown[]): unknown;
  /** Runs a statement that returns no rows; the number of rows it changed. */
  run(...values: unknown[]): number;
}

export interface SqliteConnection {
  readonly driver: SqliteDriverName;
  prepare(sql: string): SqliteStatement;
  /** Runs one or more statements without parameters (DDL, PRAGMA), ignoring their rows. */
  exec(sql: string): void;
  /**
   * `fn` wrapped in a transaction: committed when it returns, rolled back when it throws.
   * `immediate` begins it with the write lock (BEGIN IMMEDIATE), for a transaction that reads
   * what it is about to write: begun deferred, its first write could meet another process's
   * commit made since its read (SQLITE_BUSY_SNAPSHOT, which no busy timeout waits out).
   */
  transaction<A extends unknown[], R>(fn: (...args: A) => R, mode?: 'immediate'): (...args: A) => R;
  close(): void;
}

export interface SqliteOpenOptions {
  readonly readOnly?: boolean;
  /** Default: the first of sqliteDrivers(). */
  readonly driver?: SqliteDriverName;
}

/** The part of `node:sqlite` used here (@types/node 20 has no types for it). */
interface NodeSqliteStatement {
  all(...values: unknown[]): unknown[];
  get(...values: unknown[]): unknown;
  run(...values: unknown[]): { changes: number | bigint };
}
interface NodeSqliteDatabase {
  prepare(sql: string): NodeSqliteStatement;
  exec(sql: string): void;
  close(): void;
  /** Node >= 22.16 and 24.0. */
  readonly isTransaction?: boolean;
}
interface NodeSqliteModule {
  DatabaseSync: new (path: string, options?: { readOnly?: boolean }) => NodeSqliteDatabase;
}

/** The first Node release line whose ObjectWrap change makes better-sqlite3 12 abort. */
const BETTER_SQLITE3_ABORTS_FROM = 24;

function nodeSqlite(): NodeSqliteModule | undefined {
  // getBuiltinModule (Node >= 20.16) returns undefined where the module does not exist (Node 20)
  // or is still behind --experimental-sqlite (22.5 to 22.12), instead of failing an import.
  return process.getBuiltinModule('node:sqlite') as NodeSqliteModule | undefined;
}

function nodeMajor(): number {
  return Number(process.versions.node.split('.')[0]);
}

let betterSqlite3Module: typeof BetterSqlite3 | undefined;
function betterSqlite3(): typeof BetterSqlite3 {
  if (!betterSqlite3Module) {
    try {
      betterSqlite3Module = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
    } catch (cause) {
      throw new Error(
        `SQLite needs node:sqlite (Node 22.13 or newer) or, on Node ${process.versions.node}, the optional dependency better-sqlite3, which did not load (did its build fail at install?)`,
        { cause },
      );
    }
  }
  return betterSqlite3Module;
}

/** The drivers this process can use, preferred first: `node:sqlite` where Node has it. */
export function sqliteDrivers(): SqliteDriverName[] {
  const drivers: SqliteDriverName[] = [];
  if (nodeSqlite()) drivers.push('node:sqlite');
  if (nodeMajor() < BETTER_SQLITE3_ABORTS_FROM) {
    try {
      betterSqlite3();
      drivers.push('better-sqlite3');
    } catch {
      // Not installed (an optional dependency): openSqlite() says why when it is the only hope.
    }
  }
  return drivers;
}

export function openSqlite(path: string, options: SqliteOpenOptions = {}): SqliteConnection {
  const driver = options.driver ?? (nodeSqlite() ? 'node:sqlite' : 'better-sqlite3');
  if (driver === 'node:sqlite') {
    const module = nodeSqlite();
    if (!module) throw new Error(`node:sqlite is not available on Node ${process.versions.node} (it needs 22.13 or newer)`);
    return new NodeSqliteConnection(new module.DatabaseSync(path, { readOnly: options.readOnly ?? false }));
  }
  if (nodeMajor() >= BETTER_SQLITE3_ABORTS_FROM) {
    throw new Error(`better-sqlite3 12 aborts on Node ${process.versions.node} (WiseLibs/better-sqlite3#1515); use node:sqlite`);
  }
  const Database = betterSqlite3();
  return new BetterSqlite3Connection(new Database(path, { readonly: options.readOnly ?? false }));
}

class BetterSqlite3Connection implements SqliteConnection {
  readonly driver = 'better-sqlite3';

  constructor(private readonly database: BetterSqlite3.Database) {}

  prepare(sql: string): SqliteStatement {
    const statement = this.database.prepare(sql);
    return {
      all: (...values) => statement.all(...values),
      get: (...values) => statement.get(...values),
      run: (...values) => statement.run(...values).changes,
    };
  }

  exec(sql: string): void {
    this.database.exec(sql);
  }

  transaction<A extends unknown[], R>(fn: (...args: A) => R, mode?: 'immediate'): (...args: A) => R {
    const wrapped = this.database.transaction(fn);
    return mode === 'immediate' ? (...args) => wrapped.immediate(...args) : (...args) => wrapped(...args);
  }

  close(): void {
    this.database.close();
  }
}

class NodeSqliteConnection implements SqliteConnection {
  readonly driver = 'node:sqlite';
  /** Open transactions, outermost first: better-sqlite3's nesting, with savepoints. */
  private depth = 0;

  constructor(private readonly database: NodeSqliteDatabase) {}

  prepare(sql: string): SqliteStatement {
    const statement = this.database.prepare(sql);
    return {
      all: (...values) => statement.all(...values),
      get: (...values) => statement.get(...values),
      run: (...values) => Number(statement.run(...values).changes),
    };
  }

  exec(sql: string): void {
    this.database.exec(sql);
  }

  transaction<A extends unknown[], R>(fn: (...args: A) => R, mode?: 'immediate'): (...args: A) => R {
    const begin = mode === 'immediate' ? 'BEGIN IMMEDIATE' : 'BEGIN';
    return (...args) => {
      const savepoint = this.depth > 0 ? `mediagate_${this.depth}` : undefined;
      this.database.exec(savepoint ? `SAVEPOINT ${savepoint}` : begin);
      this.depth += 1;
      try {
        const result = fn(...args);
        if (result instanceof Promise) throw new TypeError('a transaction function cannot return a promise: it must run to the end synchronously');
        this.database.exec(savepoint ? `RELEASE ${savepoint}` : 'COMMIT');
        return result;
      } catch (error) {
        // SQLite rolls a transaction back itself on some errors (SQLITE_FULL, SQLITE_IOERR, ...).
        if (this.database.isTransaction !== false) {
          try {
            this.database.exec(savepoint ? `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}` : 'ROLLBACK');
          } catch {
            // Already rolled back by SQLite (Node < 22.16 cannot tell): the function's error is the one to see.
          }
        }
        throw error;
      } finally {
        this.depth -= 1;
      }
    };
  }

  close(): void {
    this.database.close();
  }
}

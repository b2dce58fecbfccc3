import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { openSqlite, type SqliteDriverName } from './sqlite-driver.js';
import { SqliteStore } from './sqlite-store.js';

export interface SqliteOptions {
  readonly path: string;
  /** NORMAL survives a process crash (WAL); FULL also survives power loss, at a write cost. */
  readonly synchronous: 'NORMAL' | 'FULL';
  /**
   * Page cache in MiB (default 64). SQLite's own default, 2 MiB, holds the pages of a few
   * thousand tasks: polls of tasks spread over a million-row table then read most pages back
   * from the OS (a syscall each), and cost 36 µs instead of 29 (`npm run bench`).
   */
  readonly cacheMb?: number;
  /** Default: node:sqlite where Node has it, else better-sqlite3 (sqlite-driver.ts). */
  readonly driver?: SqliteDriverName;
}

export function openSqliteStore(options: SqliteOptions): SqliteStore {
  mkdirSync(dirname(options.path), { recursive: true });
  const database = openSqlite(options.path, options.driver ? { driver: options.driver } : {});
  database.exec('PRAGMA journal_mode = WAL');
  database.exec(`PRAGMA synchronous = ${options.synchronous}`);
  // Another process (a CLI `keys` command, a second worker) may hold the write lock briefly.
  database.exec('PRAGMA busy_timeout = 5000');
  // Deleted rows are overwritten with zeros, not left in free pages: a deleted webhook
  // endpoint's secret (or a task's prompt) must not be readable from the file afterwards.
  database.exec('PRAGMA secure_delete = ON');
  // A negative cache_size is in KiB.
  database.exec(`PRAGMA cache_size = ${-1024 * Math.max(2, Math.floor(options.cacheMb ?? 64))}`);
  return new SqliteStore(database);
}

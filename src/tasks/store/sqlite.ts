import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { SqliteStore } from './sqlite-store.js';
import type { Store } from './store.js';

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
}

export function openSqliteStore(options: SqliteOptions): Store {
  mkdirSync(dirname(options.path), { recursive: true });
  const database = new BetterSqlite3(options.path);
  database.pragma('journal_mode = WAL');
  database.pragma(`synchronous = ${options.synchronous}`);
  // Another process (a CLI `keys` command, a second worker) may hold the write lock briefly.
  database.pragma('busy_timeout = 5000');
  // A negative cache_size is in KiB.
  database.pragma(`cache_size = ${-1024 * Math.max(2, Math.floor(options.cacheMb ?? 64))}`);
  return new SqliteStore(database);
}

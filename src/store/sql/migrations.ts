import { bigint, operation } from '../dialect.js';

/** The table that records applied schema versions (created before any migration runs). */
export const createVersionTable = operation<object>(
  'create-version-table',
  (dialect) => `CREATE TABLE IF NOT EXISTS mediagate_migrations (version INTEGER PRIMARY KEY, applied_at ${bigint(dialect)} NOT NULL)`,
);

export const isApplied = operation<{ version: number }, { version: number }>(
  'migration-applied',
  () => `SELECT version FROM mediagate_migrations WHERE version = @version`,
);

export const recordApplied = operation<{ version: number; appliedAt: number }>(
  'record-migration',
  () => `INSERT INTO mediagate_migrations (version, applied_at) VALUES (@version, @appliedAt)`,
);

/** Serialises migrations across processes on PostgreSQL (a transaction-scoped advisory lock). */
export const MIGRATION_LOCK = 727011;

export const lockMigrations = operation<object>('lock-migrations', () => `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`, ['postgres']);

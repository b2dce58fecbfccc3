import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Versioned schema migrations, applied in order at start (and by `mediagate migrate`). A
 * migration is never edited once released; a change is a new version. Each step names its SQL
 * per dialect where the two differ (SQLite INTEGER is 64-bit; PostgreSQL needs BIGINT).
 */
export type Dialect = 'sqlite' | 'postgres';

interface Migration {
  readonly version: number;
  readonly name: string;
  readonly up: (dialect: Dialect) => readonly string[];
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tasks, api keys, meta',
    up: (dialect) => {
      const bigint = dialect === 'postgres' ? 'BIGINT' : 'INTEGER';
      return [
        `CREATE TABLE tasks (
          id TEXT PRIMARY KEY,
          kind TEXT NOT NULL,
          model TEXT NOT NULL,
          owner TEXT NOT NULL,
          status TEXT NOT NULL,
          progress INTEGER,
          created_at ${bigint} NOT NULL,
          started_at ${bigint},
          completed_at ${bigint},
          error TEXT,
          outputs TEXT NOT NULL DEFAULT '[]',
          attempt INTEGER NOT NULL DEFAULT 0,
          lease_owner TEXT,
          lease_expires_at ${bigint},
          params TEXT NOT NULL
        )`,
        // Claiming reads the oldest queued task; takeover reads expired leases.
        `CREATE INDEX tasks_queued ON tasks (created_at, id) WHERE status = 'queued'`,
        `CREATE INDEX tasks_leases ON tasks (lease_expires_at) WHERE status = 'processing'`,
        `CREATE TABLE api_keys (
          id TEXT PRIMARY KEY,
          hash TEXT NOT NULL UNIQUE,
          name TEXT NOT NULL,
          created_at ${bigint} NOT NULL,
          revoked_at ${bigint}
        )`,
        `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
      ];
    },
  },
  {
    version: 2,
    name: 'tasks.interruptions: attempts lost to a stopped worker',
    // `attempt` counts every claim (it is the settle fence), including the claims after a
    // graceful hand-back; only attempts whose worker stopped count towards MEDIAGATE_MAX_ATTEMPTS.
    up: () => [`ALTER TABLE tasks ADD COLUMN interruptions INTEGER NOT NULL DEFAULT 0`],
  },
];

export const LATEST_VERSION = MIGRATIONS.at(-1)?.version ?? 0;

/** Serialises migrations across processes on PostgreSQL (a transaction-scoped advisory lock). */
const MIGRATION_LOCK = 727011;

/**
 * Applies pending migrations; safe to call from several processes at once. PostgreSQL: one
 * transaction holding an advisory lock from its first statement (even `CREATE TABLE IF NOT
 * EXISTS` races between two starters), so the loser waits and then finds everything applied.
 * SQLite: one transaction per migration.
 */
export async function migrate(db: Kysely<Database>, dialect: Dialect): Promise<number[]> {
  if (dialect === 'postgres') {
    return db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(trx);
      await createVersionTable(trx, dialect);
      const applied: number[] = [];
      for (const migration of MIGRATIONS) {
        if (await apply(trx, dialect, migration)) applied.push(migration.version);
      }
      return applied;
    });
  }
  await createVersionTable(db, dialect);
  const applied: number[] = [];
  for (const migration of MIGRATIONS) {
    if (await db.transaction().execute((trx) => apply(trx, dialect, migration))) applied.push(migration.version);
  }
  return applied;
}

async function createVersionTable(db: Kysely<Database>, dialect: Dialect): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS mediagate_migrations (version INTEGER PRIMARY KEY, applied_at ${sql.raw(
    dialect === 'postgres' ? 'BIGINT' : 'INTEGER',
  )} NOT NULL)`.execute(db);
}

async function apply(trx: Kysely<Database>, dialect: Dialect, migration: Migration): Promise<boolean> {
  const row = await trx.selectFrom('mediagate_migrations').select('version').where('version', '=', migration.version).executeTakeFirst();
  if (row) return false;
  for (const statement of migration.up(dialect)) await sql.raw(statement).execute(trx);
  await trx.insertInto('mediagate_migrations').values({ version: migration.version, applied_at: Date.now() }).execute();
  return true;
}

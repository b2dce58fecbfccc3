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
];

export const LATEST_VERSION = MIGRATIONS.at(-1)?.version ?? 0;

/** Applies pending migrations in one transaction each; safe to call from several processes. */
export async function migrate(db: Kysely<Database>, dialect: Dialect): Promise<number[]> {
  await sql`CREATE TABLE IF NOT EXISTS mediagate_migrations (version INTEGER PRIMARY KEY, applied_at ${sql.raw(
    dialect === 'postgres' ? 'BIGINT' : 'INTEGER',
  )} NOT NULL)`.execute(db);
  const applied: number[] = [];
  for (const migration of MIGRATIONS) {
    const done = await db.transaction().execute(async (trx) => {
      if (dialect === 'postgres') {
        // Serialise concurrent starters: the loser waits, then sees the version applied.
        await sql`SELECT pg_advisory_xact_lock(727011)`.execute(trx);
      }
      const row = await trx
        .selectFrom('mediagate_migrations')
        .select('version')
        .where('version', '=', migration.version)
        .executeTakeFirst();
      if (row) return false;
      for (const statement of migration.up(dialect)) await sql.raw(statement).execute(trx);
      await trx.insertInto('mediagate_migrations').values({ version: migration.version, applied_at: Date.now() }).execute();
      return true;
    });
    if (done) applied.push(migration.version);
  }
  return applied;
}

import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * PostgreSQL for the specs: a server reachable at MEDIAGATE_TEST_PG_URL (default the local
 * `postgres` superuser with trust auth), and a fresh database per use, dropped afterwards.
 *
 * Which backends run: MEDIAGATE_TEST_BACKENDS=sqlite,postgres (the default is both). When
 * PostgreSQL is selected but unreachable, its specs are skipped with HOW_TO_RUN, except under
 * CI (CI=true), where that is an error: there they must run.
 */
export const PG_ADMIN_URL = process.env['MEDIAGATE_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const HOW_TO_RUN =
  'to run them, start PostgreSQL 12 or newer on 127.0.0.1:5432 with a `postgres` user and trust auth ' +
  '(or set MEDIAGATE_TEST_PG_URL=postgres://user:password@host:port/postgres for a role that may CREATE DATABASE)';

export type Backend = 'sqlite' | 'postgres';

export function selectedBackends(): Backend[] {
  const raw = process.env['MEDIAGATE_TEST_BACKENDS']?.trim();
  if (!raw) return ['sqlite', 'postgres'];
  const chosen = raw.split(',').map((name) => name.trim().toLowerCase());
  for (const name of chosen) {
    if (name !== 'sqlite' && name !== 'postgres') throw new Error(`MEDIAGATE_TEST_BACKENDS: unknown backend '${name}' (sqlite, postgres)`);
  }
  return chosen as Backend[];
}

async function reachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export interface PostgresAvailability {
  readonly enabled: boolean;
  /** Why the PostgreSQL specs do not run, and how to run them. */
  readonly reason: string;
}

let availability: Promise<PostgresAvailability> | undefined;

/** Whether the PostgreSQL specs run in this process (probed once). */
export function postgresAvailability(): Promise<PostgresAvailability> {
  availability ??= (async () => {
    if (!selectedBackends().includes('postgres')) return { enabled: false, reason: 'PostgreSQL specs not selected (MEDIAGATE_TEST_BACKENDS)' };
    if (await reachable()) return { enabled: true, reason: '' };
    const where = new URL(PG_ADMIN_URL).host;
    if (process.env['CI']) throw new Error(`PostgreSQL is not reachable at ${where}, and under CI its specs must run; ${HOW_TO_RUN}.`);
    const reason = `PostgreSQL specs skipped: no PostgreSQL at ${where}; ${HOW_TO_RUN}`;
    // Once per run: the test processes inherit the environment of the one that loaded the config.
    if (!process.env['MEDIAGATE_TEST_PG_SKIP_SHOWN']) process.stderr.write(`\n${reason}\n\n`);
    process.env['MEDIAGATE_TEST_PG_SKIP_SHOWN'] = '1';
    return { enabled: false, reason };
  })();
  return availability;
}

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  drop(): Promise<void>;
}

export async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  client.on('error', () => {});
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * The migrated database the run's test databases are cloned from, named by the global setup
 * (test/setup/postgres-template.ts) for the test processes it starts.
 */
export const TEMPLATE_VARIABLE = 'MEDIAGATE_TEST_PG_TEMPLATE';

/**
 * A new database `mediagate_test_<random>`; drop() removes it (MEDIAGATE_TEST_KEEP_DB=1 keeps it).
 * It is a copy of the run's template when there is one, so it already holds the store's and the
 * job queue's schemas (migrating it again changes nothing); `{ empty: true }`, or a process
 * started outside Vitest, gets an empty one.
 */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const name = `mediagate_test_${randomBytes(6).toString('hex')}`;
  const template = options.empty ? undefined : process.env[TEMPLATE_VARIABLE];
  await admin((client) => client.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`));
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      if (process.env['MEDIAGATE_TEST_KEEP_DB'] === '1') return;
      await admin(async (client) => {
        // DROP ... WITH (FORCE) needs PostgreSQL 13; this works from 12.
        await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
        await client.query(`DROP DATABASE IF EXISTS ${name}`);
      });
    },
  };
}

import { randomBytes } from 'node:crypto';
import { openBackend } from '../../src/tasks/backend.js';
import { PG_ADMIN_URL, TEMPLATE_VARIABLE, admin, postgresAvailability } from '../helpers/postgres.js';

/**
 * Vitest's global setup for the PostgreSQL specs: one database migrated once per run (the store's
 * schema and graphile-worker's), which every test database then copies
 * (`CREATE DATABASE ... TEMPLATE`, helpers/postgres.ts) instead of running the migrations again:
 * a run makes a few hundred databases. Its name reaches the test processes, which start after
 * this, through the environment; it is dropped when the run ends. A random name keeps runs that
 * share the server apart.
 */
const silent = { debug() {}, info() {}, warn() {}, error() {} };

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (!(await postgresAvailability()).enabled) return undefined;
  const name = `mediagate_template_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const drop = (): Promise<void> =>
    admin(async (client) => {
      await client.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE false`);
      await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
      await client.query(`DROP DATABASE IF EXISTS ${name}`);
    });
  try {
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${name}`;
    const backend = openBackend({ databaseUrl: url.toString(), pgPoolSize: 2, sqlitePath: '', sqliteSynchronous: 'NORMAL', log: silent });
    try {
      await backend.migrate();
    } finally {
      await backend.close();
    }
    // A copy needs the template to have no session open: none may connect to it from now on.
    await admin((client) => client.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`));
  } catch (error) {
    await drop().catch(() => {});
    throw error;
  }
  process.env[TEMPLATE_VARIABLE] = name;
  return drop;
}

import { pino } from 'pino';
import { openBackendFor } from '../service-factory.js';
import { readConfig } from './serve.js';

/**
 * `mediagate migrate`: applies pending schema migrations and exits. Every process also
 * migrates at start (safely, several at once); this lets an operator do it ahead of a rollout.
 */
export async function migrate(): Promise<void> {
  const config = readConfig();
  const logger = pino({ level: config.logLevel });
  const backend = openBackendFor(config, logger);
  try {
    const { store } = await backend.migrate();
    const where = backend.kind === 'postgres' ? 'PostgreSQL (DATABASE_URL), with the job queue schema' : `SQLite in ${config.dataDir}`;
    const applied = store.length > 0 ? `applied migration ${store.join(', ')}` : 'already up to date';
    process.stdout.write(`mediagate: ${where}: ${applied}.\n`);
  } finally {
    await backend.close();
  }
}

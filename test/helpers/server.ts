import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createMediagate, type Mediagate, type MediagateOptions } from '../../src/service-factory.js';
import { loadConfig } from '../../src/config.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';
import { startRoundRobinProxy, startScaledOut, type ScaledOut } from './scaled-out.js';

export interface TestServer {
  url: string;
  keys: readonly [string, string];
  dataDir: string;
  app: Mediagate;
  close(): Promise<void>;
}

export const TEST_KEYS = ['mg_test_key_alpha_0123456789', 'mg_test_key_bravo_0123456789'] as const;

/**
 * Starts a real mediagate on 127.0.0.1 and an ephemeral port, with a fresh data directory
 * and two API keys. `env` overrides configuration variables, as an operator would set them.
 *
 * The same specs run on either backend, chosen by the environment of the test run (see the
 * projects in vitest.config.ts):
 * - MEDIAGATE_TEST_BACKEND=postgres: a fresh PostgreSQL database per server, dropped at close.
 * - MEDIAGATE_TEST_TOPOLOGY=split (PostgreSQL): the scaled-out deployment. `url` is a
 *   round-robin proxy over two API processes (this process's `app`, with no workers, and a
 *   `mediagate serve --no-workers` child) and two `mediagate worker` children render, all
 *   sharing the database and the data directory. MEDIAGATE_TEST_CHAOS_MS=n also SIGKILLs a
 *   worker every n ms and starts a new one.
 */
export async function startServer(env: Record<string, string> = {}, options: MediagateOptions = {}): Promise<TestServer> {
  const dataDir = env['MEDIAGATE_DATA_DIR'] ?? (await mkdtemp(join(tmpdir(), 'mediagate-test-')));
  const backend = process.env['MEDIAGATE_TEST_BACKEND'] ?? 'sqlite';
  const split = backend === 'postgres' && process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'split';
  let database: TestDatabase | undefined;
  if (backend === 'postgres' && env['DATABASE_URL'] === undefined) database = await createTestDatabase();
  const base: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    MEDIAGATE_DATA_DIR: dataDir,
    MEDIAGATE_API_KEYS: TEST_KEYS.join(','),
    MEDIAGATE_CONCURRENCY: '2',
    LOG_LEVEL: 'silent',
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...env,
  };
  const proxy = split ? await startRoundRobinProxy() : undefined;
  let app: Mediagate | undefined;
  let cluster: ScaledOut | undefined;
  let chaos: NodeJS.Timeout | undefined;
  let url: string;
  try {
    const config = loadConfig({ ...base, ...(proxy ? { MEDIAGATE_WORKERS: 'false', MEDIAGATE_PUBLIC_URL: proxy.url } : {}) });
    app = await createMediagate(config, { logger: pino({ level: config.logLevel }), ...options });
    ({ url } = await app.start());
    if (proxy) {
      const { PORT: _port, ...shared } = base;
      // Workers log at info: `mediagate worker started` tells that one is ready.
      cluster = await startScaledOut({ ...shared, LOG_LEVEL: 'info' }, { apis: 1, workers: 2 }, { proxy, alsoUpstreams: [url] });
      const every = Number(process.env['MEDIAGATE_TEST_CHAOS_MS'] ?? '0');
      if (every > 0) {
        let victim = 0;
        chaos = setInterval(() => void cluster?.replaceWorker((victim += 1) % 2).catch(() => {}), every);
      }
    }
  } catch (error) {
    await app?.close(0).catch(() => {});
    await proxy?.close();
    await database?.drop();
    throw error;
  }
  const started = app;
  return {
    url: proxy?.url ?? url,
    keys: TEST_KEYS,
    dataDir,
    app: started,
    async close() {
      if (chaos) clearInterval(chaos);
      await cluster?.close();
      await started.close(2000);
      await database?.drop();
      if (!env['MEDIAGATE_DATA_DIR']) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

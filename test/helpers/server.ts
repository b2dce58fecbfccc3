import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadChannelsConfig } from '../../src/channels/config.js';
import { createMediagate, type Mediagate, type MediagateOptions } from '../../src/service-factory.js';
import { loadConfig } from '../../src/config.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';
import { emptyPrefix, freshPrefix, s3Env, s3Target } from './s3.js';
import { startRoundRobinProxy, startScaledOut, type ScaledOut } from './scaled-out.js';

export interface TestServer {
  url: string;
  keys: readonly [string, string];
  dataDir: string;
  app: Mediagate;
  /** MEDIAGATE_TEST_TOPOLOGY=via-channel: mediagate B, which every model of `url` goes through. */
  upstream?: { readonly url: string; readonly key: string };
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
 * - MEDIAGATE_TEST_TOPOLOGY=via-channel: `url` is a mediagate (A) whose channels file routes
 *   every model to a `mediagate` channel pointing at a second mediagate (B, sandbox, its own
 *   key and data directory): validation is A's, everything that renders goes through B and its
 *   outputs are copied into A's storage. `env` applies to both (B renders, A signs).
 * - MEDIAGATE_TEST_STORAGE=s3: media in the S3 server of the run (helpers/s3.ts), under a key
 *   prefix of the server's own, emptied at close; MEDIAGATE_TEST_OUTPUT_URLS=presigned also
 *   gives clients the store's presigned URLs. `env` may still choose its own storage.
 */
export async function startServer(env: Record<string, string> = {}, options: MediagateOptions = {}): Promise<TestServer> {
  const dataDir = env['MEDIAGATE_DATA_DIR'] ?? (await mkdtemp(join(tmpdir(), 'mediagate-test-')));
  const backend = process.env['MEDIAGATE_TEST_BACKEND'] ?? 'sqlite';
  const split = backend === 'postgres' && process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'split';
  let database: TestDatabase | undefined;
  if (backend === 'postgres' && env['DATABASE_URL'] === undefined) database = await createTestDatabase();
  const s3 = process.env['MEDIAGATE_TEST_STORAGE'] === 's3' && env['MEDIAGATE_STORAGE'] === undefined ? s3Target().target : undefined;
  const prefix = freshPrefix();
  const base: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    MEDIAGATE_DATA_DIR: dataDir,
    MEDIAGATE_API_KEYS: TEST_KEYS.join(','),
    MEDIAGATE_CONCURRENCY: '2',
    LOG_LEVEL: 'silent',
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...(s3 ? s3Env(s3, prefix) : {}),
    ...(s3 && process.env['MEDIAGATE_TEST_OUTPUT_URLS'] ? { MEDIAGATE_OUTPUT_URLS: process.env['MEDIAGATE_TEST_OUTPUT_URLS'] } : {}),
    ...env,
  };
  const proxy = split ? await startRoundRobinProxy() : undefined;
  const upstream = process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'via-channel' ? await startUpstream(base, dataDir) : undefined;
  if (upstream) options = { ...options, ...upstream.options };
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
    await upstream?.close();
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
    ...(upstream ? { upstream: { url: upstream.url, key: UPSTREAM_KEY } } : {}),
    async close() {
      if (chaos) clearInterval(chaos);
      await cluster?.close();
      await started.close(2000);
      await upstream?.close();
      await database?.drop();
      if (s3) await emptyPrefix(s3, prefix);
      if (!env['MEDIAGATE_DATA_DIR']) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** B's own key: A sends it, as a channel key, from the environment variable its channels file names. */
const UPSTREAM_KEY = 'mg_test_upstream_key_0123456789';

/**
 * Mediagate B (the sandbox, its own key, database and data directory) and the options that make
 * A route every model to it through a `mediagate` channel. A's scheduler polls every 100-500 ms
 * (the defaults, 2-30 s, would only slow the specs down).
 */
async function startUpstream(base: Record<string, string>, dataDir: string): Promise<{ url: string; options: MediagateOptions; close(): Promise<void> }> {
  const upstreamDir = await mkdtemp(join(tmpdir(), 'mediagate-test-upstream-'));
  const database = process.env['MEDIAGATE_TEST_BACKEND'] === 'postgres' ? await createTestDatabase() : undefined;
  const config = loadConfig({
    ...base,
    PORT: '0',
    MEDIAGATE_DATA_DIR: upstreamDir,
    MEDIAGATE_API_KEYS: UPSTREAM_KEY,
    // Both of A's keys share B's one key: B must not limit them as one client.
    MEDIAGATE_RATE_LIMIT_PER_MIN: '0',
    MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
    ...(database ? { DATABASE_URL: database.url } : {}),
  });
  const app = await createMediagate(config, { logger: pino({ level: config.logLevel }) });
  try {
    const { url } = await app.start();
    const file = join(dataDir, 'channels.json');
    await writeFile(
      file,
      JSON.stringify({
        channels: {
          b: { protocol: 'mediagate', base_url: url, api_key_env: 'MEDIAGATE_TEST_CHANNEL_KEY', max_in_flight: 1000, submit_per_s: 1000, poll_per_s: 1000 },
        },
        routes: [{ model: '*', to: [{ channel: 'b' }] }],
      }),
    );
    const channels = loadChannelsConfig(file, { MEDIAGATE_TEST_CHANNEL_KEY: UPSTREAM_KEY });
    return {
      url,
      options: { channels, upstreamTimings: { pollStartMs: 100, pollMaxMs: 500, idleMs: 100 } },
      async close() {
        await app.close(2000);
        await database?.drop();
        await rm(upstreamDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await app.close(0).catch(() => {});
    await database?.drop();
    throw error;
  }
}

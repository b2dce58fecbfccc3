import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createMediagate, type Mediagate, type MediagateOptions } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

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
 */
export async function startServer(env: Record<string, string> = {}, options: MediagateOptions = {}): Promise<TestServer> {
  const dataDir = env['MEDIAGATE_DATA_DIR'] ?? (await mkdtemp(join(tmpdir(), 'mediagate-test-')));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    MEDIAGATE_DATA_DIR: dataDir,
    MEDIAGATE_API_KEYS: TEST_KEYS.join(','),
    MEDIAGATE_CONCURRENCY: '2',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const app = await createMediagate(config, { logger: pino({ level: config.logLevel }), ...options });
  const { url } = await app.start();
  return {
    url,
    keys: TEST_KEYS,
    dataDir,
    app,
    async close() {
      await app.close(2000);
      if (!env['MEDIAGATE_DATA_DIR']) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

// A real server with a pricing file, an admin key and a budget on its second key: what the
// usage specs of the SDK, the CLI and the console all start from.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediagateAdmin } from '../../src/client/index.js';
import { createInstantEngine } from '../../src/engines/instant.js';
import { envKeyId } from './ledger.js';
import { startServer, type TestServer } from './server.js';

export const ADMIN_KEY = 'mg_test_admin_key_0123456789';

export interface PricedServer {
  readonly server: TestServer;
  close(): Promise<void>;
}

/**
 * `server.keys[1]` gets `budget` for `period`, set before its first request: whether a key has
 * a budget is cached by a process for a few seconds.
 */
export async function startPricedServer(pricing: object, budget: { readonly amount: number; readonly period: 'day' | 'month' | null }): Promise<PricedServer> {
  const dir = await mkdtemp(join(tmpdir(), 'mediagate-pricing-'));
  await writeFile(join(dir, 'pricing.json'), JSON.stringify(pricing));
  const server = await startServer(
    { MEDIAGATE_PRICING_FILE: join(dir, 'pricing.json'), MEDIAGATE_RATE_LIMIT_PER_MIN: '0', MEDIAGATE_ADMIN_KEYS: ADMIN_KEY },
    { engine: createInstantEngine() },
  );
  await new MediagateAdmin({ baseURL: server.url, apiKey: ADMIN_KEY }).keys.update(envKeyId(server.keys[1]), {
    budget: budget.amount,
    budget_period: budget.period,
  });
  return {
    server,
    async close() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

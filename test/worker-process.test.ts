/**
 * A worker-only process (`mediagate worker`, createMediagateWorker) renders tasks with the same
 * store, engine and pool as a serving one, and builds no HTTP server.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MODELS, createValidator } from '../src/catalog/index.js';
import { loadConfig } from '../src/config.js';
import { createMediagateWorker } from '../src/service-factory.js';

describe('a worker-only process', () => {
  it('renders a task and has no HTTP server', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-worker-'));
    const config = loadConfig({
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_API_KEYS: 'mg_test_key_alpha_0123456789',
      MEDIAGATE_ENGINE: 'instant',
      MEDIAGATE_CONCURRENCY: '1',
    });
    const worker = await createMediagateWorker(config, { logger: pino({ level: 'silent' }) });
    try {
      expect('http' in worker).toBe(false);
      await worker.start();
      const validated = createValidator(MODELS).validate('video', { body: { model: 'vendora/famw-2.7-t2v', prompt: 'a fox' }, bodyBytes: 50 });
      if (!validated.ok) throw new Error(validated.error.code);
      const settled = once(worker.service, 'settled') as Promise<[{ id: string; status: string }]>;
      const task = await worker.service.create('owner', validated.row, validated.params);
      const [event] = await settled;
      expect(event).toMatchObject({ id: task.id, status: 'completed', model: 'vendora/famw-2.7-t2v' });
    } finally {
      await worker.close(0);
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

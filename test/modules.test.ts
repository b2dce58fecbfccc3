/**
 * The composition root is a list of modules (src/modules/): each serves its own rows of the
 * route table, runs its loops between start and close, and reads only configuration fields
 * that exist. A real server and a real worker-only process, on SQLite.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { ROUTES } from '../src/http/routes.js';
import { SLICES } from '../src/modules/slices/index.js';
import { createMediagateWorker } from '../src/service-factory.js';
import { startServer, type TestServer } from './helpers/server.js';

const rowsOf = (rows: readonly { path: string; methods: readonly string[] }[]): string[] =>
  rows.flatMap((row) => row.methods.map((method) => `${method} ${row.path}`));

describe('the modules of a serving process', () => {
  let server: TestServer | undefined;
  afterAll(async () => server?.close());

  it('are one per feature, and together serve exactly the route table, each row once', async () => {
    server = await startServer();
    const { modules } = server.app;
    expect(modules.map((module) => module.name)).toEqual(['tasks', 'channels', 'webhooks', 'files', 'usage', 'admin-keys', 'front-doors', 'observability']);
    const served = modules.flatMap((module) => rowsOf(module.routes));
    expect(served).toEqual(rowsOf(ROUTES));
    expect(new Set(served).size).toBe(served.length);
  });

  it("declare configuration fields that the configuration has; each slice is a module's and read by it", () => {
    const config = loadConfig({});
    const modules = server?.app.modules ?? [];
    for (const module of modules) {
      for (const field of module.config) expect(Object.hasOwn(config, field), `${module.name}: ${field}`).toBe(true);
    }
    for (const [name, slice] of Object.entries(SLICES)) {
      const module = modules.find((candidate) => candidate.name === name);
      expect(module, `slice ${name}`).toBeDefined();
      expect(
        Object.keys(slice).some((field) => module?.config.includes(field as keyof typeof config)),
        `slice ${name}`,
      ).toBe(true);
    }
  });

  it('run their loops once started: each has turned, and none turns after close', async () => {
    const loops = server?.app.modules.flatMap((module) => module.loops) ?? [];
    expect(loops.map((loop) => loop.name).sort()).toEqual(['retention', 'signing-refresh', 'sweeper']);
    // Retention and the sweeper turn at start; the signing refresh first waits its interval.
    await Promise.all(loops.filter((loop) => loop.name !== 'signing-refresh').map((loop) => loop.after(1)));
    expect(loops.every((loop) => loop.active)).toBe(true);
    await server?.close();
    server = undefined;
    expect(loops.some((loop) => loop.active)).toBe(false);
  });
});

describe('a worker-only process', () => {
  it('runs the work modules only (no server, so their rows are not served)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-modules-'));
    const worker = await createMediagateWorker(loadConfig({ MEDIAGATE_DATA_DIR: dataDir, LOG_LEVEL: 'silent', MEDIAGATE_CONCURRENCY: '1' }));
    try {
      expect(worker.modules.map((module) => module.name)).toEqual(['tasks', 'channels', 'webhooks', 'files']);
      await worker.start();
      expect(worker.pool).toBeDefined();
    } finally {
      await worker.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

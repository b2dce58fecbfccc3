/**
 * `mediagate usage` where nothing is priced (no pricing file): every task costs 0, so the report
 * names no currency and has no cost column, and the budget line no amount: "USD 0.00" would say
 * the tasks were priced. Run as a child process as built (dist/) against a real server.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mediagate } from '../src/client/index.js';
import { createInstantEngine } from '../src/engines/instant.js';
import { startServer, type TestServer } from './helpers/server.js';
import { CLI } from './helpers/process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function usage(server: TestServer): Promise<{ code: number | null; stdout: string }> {
  const env = { ...process.env, MEDIAGATE_BASE_URL: server.url, MEDIAGATE_API_KEY: server.keys[0] };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'usage'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

describe('mediagate usage without a pricing file', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({}, { engine: createInstantEngine() });
    const client = new Mediagate({ baseURL: server.url, apiKey: server.keys[0] });
    await client.videos.createAndWait({ model: 'vendora/famw-2.7-t2v', prompt: 'unpriced', duration: 2 }, { pollInterval: 50, maxPollInterval: 200 });
  }, 60_000);
  afterAll(async () => server?.close());

  it('counts the tasks, names no currency and shows no amount', async () => {
    const ran = await usage(server);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/^Usage \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2} \(UTC days\), nothing priced$/m);
    expect(ran.stdout).toMatch(/^MODEL\s+DAY\s+TASKS\s+SECONDS\s+IMAGES$/m);
    expect(ran.stdout).toMatch(/^TOTAL\s+1\s+2\s+0$/m);
    expect(ran.stdout).toMatch(/^Budget: none\.$/m);
    expect(ran.stdout).not.toMatch(/USD|0\.00|COST/);
  });
});

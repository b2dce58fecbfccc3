/**
 * An upstream's words pass through the logs' scrubber before a task keeps them: a provider whose
 * error message quotes our Authorization header (the channel's API key) puts neither the key
 * nor the header in the task's error, in the poll or in the database. On either backend.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseChannelsConfig } from '../src/channels/config.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { startServer, type TestServer } from './helpers/server.js';
import { openSqlite } from '../src/store/sqlite-driver.js';

const split = process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'split';
const CHANNEL_KEY = 'sk-echoed-secret-0123456789abcdef';
const BACKENDS = [...(selectedBackends().includes('sqlite') ? ['sqlite'] : []), ...((await postgresAvailability()).enabled ? ['postgres'] : [])];

/** A DashScope-shaped upstream that refuses every submission, quoting the request's headers. */
async function startEchoingUpstream(): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const message = `Invalid request: header Authorization: ${req.headers.authorization ?? ''} (raw key ${CHANNEL_KEY}) is not allowed for this model`;
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'InvalidParameter', message, request_id: 'req-1' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.skipIf(split).each(BACKENDS)('an upstream that echoes our key (%s)', (backend) => {
  let upstream: Awaited<ReturnType<typeof startEchoingUpstream>>;
  let server: TestServer;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    upstream = await startEchoingUpstream();
    if (backend === 'postgres') database = await createTestDatabase();
    const channels = parseChannelsConfig(
      JSON.stringify({
        channels: { echo: { protocol: 'dashscope', base_url: upstream.origin, api_key_env: 'T_ECHO' } },
        routes: [
          { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'echo', upstream_model: 'wan2.7-t2v' }] },
          { model: '*', to: [{ channel: 'sandbox' }] },
        ],
      }),
      { T_ECHO: CHANNEL_KEY },
    );
    server = await startServer(
      { MEDIAGATE_ENGINE: 'instant', ...(database ? { DATABASE_URL: database.url } : {}) },
      { channels, upstreamTimings: { pollStartMs: 50, pollMaxMs: 100, idleMs: 50 } },
    );
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await database?.drop();
    await upstream?.close();
  });

  async function storedError(id: string): Promise<string> {
    if (database) {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        return String((await client.query<{ error: string }>('SELECT error FROM tasks WHERE id = $1', [id])).rows[0]?.error ?? '');
      } finally {
        await client.end();
      }
    }
    const db = openSqlite(join(server.dataDir, 'mediagate.db'), { readOnly: true });
    try {
      return String((db.prepare('SELECT error FROM tasks WHERE id = ?').get(id) as { error: string } | undefined)?.error ?? '');
    } finally {
      db.close();
    }
  }

  it("keeps the key and the header out of the failed task's error, polled and stored", async () => {
    const auth = { authorization: `Bearer ${server.keys[0]}` };
    const created = await fetch(`${server.url}/v1/video/generations`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'echo' }),
    });
    const { id } = (await created.json()) as { id: string };
    const task = await eventually(
      async () => {
        const body = (await (await fetch(`${server.url}/v1/video/generations/${id}`, { headers: auth })).json()) as {
          status: string;
          error: { message: string } | null;
        };
        return body.status === 'failed' && body;
      },
      { deadline: 15_000, what: 'the refused task to fail' },
    );
    // The upstream's words are kept, its echo of our credentials is not.
    expect(task.error?.message).toContain('is not allowed for this model');
    expect(task.error?.message).toContain('[redacted]');
    const stored = await storedError(id);
    expect(stored).toContain('is not allowed for this model');
    for (const text of [JSON.stringify(task), stored]) {
      expect(text).not.toContain(CHANNEL_KEY);
      expect(text).not.toContain(CHANNEL_KEY.slice(3, 20));
    }
  });
});

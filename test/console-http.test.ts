import { Agent, fetch, type RequestInit } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { FILE_CSP } from '../src/http/routes/files.js';
import { eventually } from './helpers/eventually.js';
import { startServer, type TestServer } from './helpers/server.js';

/** The console's page and assets as HTTP (caching, CSP), the docs' links into it, and CORS on and off. */

/**
 * fetch through an agent of this file, with the body always read: the agent's connections are
 * destroyed before each server closes, so no kept-alive connection makes the close wait.
 */
let agent = new Agent();
async function read(url: string, init: RequestInit = {}) {
  const response = await fetch(url, { ...init, dispatcher: agent });
  const bytes = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    headers: response.headers,
    text: () => Promise.resolve(bytes.toString('utf8')),
    json: (): Promise<unknown> => Promise.resolve<unknown>(JSON.parse(bytes.toString('utf8'))),
    arrayBuffer: () => Promise.resolve(bytes),
  };
}

async function completedVideo(server: TestServer, origin?: string): Promise<{ id: string; url: string }> {
  const created = await read(`${server.url}/v1/video/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox', duration: 2, resolution: '480p' }),
  });
  const { id } = (await created.json()) as { id: string };
  const task = await eventually(
    async () => {
      const response = await read(`${server.url}/v1/video/generations/${id}`, {
        headers: { authorization: `Bearer ${server.keys[0]}`, ...(origin ? { origin } : {}) },
      });
      const current = (await response.json()) as { status: string; outputs: { url: string }[] };
      return (current.status === 'completed' || current.status === 'failed') && current;
    },
    { deadline: 60_000, interval: 100, what: `task ${id} to end` },
  );
  if (task.status !== 'completed') throw new Error(`task ${id} ${task.status}`);
  return { id, url: task.outputs[0]?.url ?? '' };
}

describe('console over HTTP, CORS off (the default)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await agent.destroy();
    agent = new Agent();
    await server?.close();
  });

  it('/ points to /console; the page is revalidated, has a strict CSP and no inline script', async () => {
    const root = await read(`${server.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/console');
    const page = await read(`${server.url}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toContain('__MEDIAGATE_HINTS__');
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
    const hints = /name="mediagate-hints" content="([^"]*)"/.exec(html)?.[1] ?? '';
    expect(
      JSON.parse(
        hints
          .replace(/&quot;/g, '"')
          .replace(/&lt;/g, '<')
          .replace(/&amp;/g, '&'),
      ),
    ).toMatchObject({
      bodyLimitBytes: 32 * 1024 * 1024,
      models: { 'vendord/v6/reference-to-video': { maxBodyBytes: 20 * 1024 * 1024, refNameMaxBytes: 30 } },
    });
    const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1] ?? '');
    expect(assets).toHaveLength(2);
    for (const asset of assets) {
      const reply = await read(`${server.url}${asset}`);
      expect(reply.status).toBe(200);
      expect(reply.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(reply.headers.get('content-type')).toMatch(asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      await reply.arrayBuffer();
    }
    expect((await read(`${server.url}/console/assets/app-00000000.js`)).status).toBe(404);
    expect((await read(`${server.url}/console`, { method: 'POST' })).status).toBe(405);
  });

  it('the reference (/openapi.json, rendered at /docs) links each model into the console and uses MEDIAGATE_BASE_URL with offline inputs', async () => {
    const text = await (await read(`${server.url}/openapi.json`)).text();
    expect(text).toContain(`(/console#model=${encodeURIComponent('vendord/v6/reference-to-video')})`);
    expect(text).toContain('$MEDIAGATE_BASE_URL/v1/video/generations');
    expect(text).not.toContain('$MEDIAGATE_URL');
    const document = JSON.parse(text) as { paths: Record<string, { post?: { requestBody: { content: { 'application/json': { examples: object } } } } }> };
    const examples = JSON.stringify(document.paths['/v1/video/generations']?.post?.requestBody.content['application/json'].examples);
    expect(examples).toContain('data:image/png;base64,');
    expect(examples).not.toContain('https://');
  });

  it('sends no CORS headers, and answers no preflight', async () => {
    const models = await read(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.keys[0]}`, origin: 'https://app.example' } });
    expect(models.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await read(`${server.url}/v1/video/generations`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(preflight.status).toBe(405);
  });

  it('serves outputs with nosniff and a CSP that allows only the media itself', async () => {
    const { url } = await completedVideo(server);
    const file = await read(url);
    expect(file.status).toBe(200);
    expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    expect(file.headers.get('content-security-policy')).toBe(FILE_CSP);
    expect(FILE_CSP).not.toMatch(/script-src|allow-scripts/);
    expect(FILE_CSP).toContain("default-src 'none'");
    await file.arrayBuffer();
  });
});

describe('CORS with MEDIAGATE_CORS_ORIGINS', () => {
  let server: TestServer;
  const APP = 'https://app.example';
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_CORS_ORIGINS: `${APP}, http://localhost:5173` });
  });
  afterAll(async () => {
    await agent.destroy();
    agent = new Agent();
    await server?.close();
  });

  it('answers a preflight from a listed origin, and not from another', async () => {
    const preflight = await read(`${server.url}/v1/video/generations`, {
      method: 'OPTIONS',
      headers: { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(APP);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
    expect(preflight.headers.get('vary')).toContain('Origin');
    const other = await read(`${server.url}/v1/video/generations`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('sets the headers on /v1, /openapi.json, status polls and outputs; not on the console', async () => {
    const models = await read(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.keys[0]}`, origin: APP } });
    expect(models.headers.get('access-control-allow-origin')).toBe(APP);
    expect(models.headers.get('access-control-expose-headers')).toContain('X-Request-ID');
    const refused = await read(`${server.url}/v1/models`, { headers: { origin: APP } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(APP);
    const openapi = await read(`${server.url}/openapi.json`, { headers: { origin: APP } });
    expect(openapi.headers.get('access-control-allow-origin')).toBe(APP);
    const { id, url } = await completedVideo(server, APP);
    // Polls twice, so the second one would take the fast path if CORS did not keep it on the router.
    for (let i = 0; i < 2; i += 1) {
      const poll = await read(`${server.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${server.keys[0]}`, origin: APP } });
      expect(poll.headers.get('access-control-allow-origin')).toBe(APP);
    }
    const file = await read(url, { headers: { origin: APP } });
    expect(file.headers.get('access-control-allow-origin')).toBe(APP);
    await file.arrayBuffer();
    const page = await read(`${server.url}/console`, { headers: { origin: APP } });
    expect(page.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('`*` allows any origin, without credentials', async () => {
    const open = await startServer({ MEDIAGATE_CORS_ORIGINS: '*' });
    try {
      const reply = await read(`${open.url}/openapi.json`, { headers: { origin: 'https://anything.example' } });
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');
      expect(reply.headers.get('access-control-allow-credentials')).toBeNull();
    } finally {
      await agent.destroy();
      agent = new Agent();
      await open.close();
    }
  });

  it('refuses a malformed origin at start', () => {
    expect(() => loadConfig({ MEDIAGATE_CORS_ORIGINS: 'https://app.example/' })).toThrow(ConfigError);
    expect(() => loadConfig({ MEDIAGATE_CORS_ORIGINS: 'app.example' })).toThrow(ConfigError);
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ MEDIAGATE_CORS_ORIGINS: '*' }).corsOrigins).toBe('*');
  });
});

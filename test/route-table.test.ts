/**
 * The route table (src/http/routes.ts) is the one declaration of the service's routes: every
 * row answers its methods over HTTP, every other method on its path is a 405 whose `Allow`
 * lists the path's methods, the requests are counted under the row's metrics label, and a
 * route registered other than from the table stops the build.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS } from '../src/catalog/index.js';
import { loadConfig } from '../src/config.js';
import { familyOf } from '../src/wire/envelopes.js';
import { ROUTES } from '../src/http/routes.js';
import { createMediagate } from '../src/service-factory.js';
import { startServer, type TestServer } from './helpers/server.js';

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
const ORDER: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** A concrete path for a pattern: parameters filled so that handlers run. */
function samplePath(pattern: string): string {
  return pattern
    .split('/')
    .map((part) => (part === '*' ? (MODELS[0]?.id ?? 'x') : part.startsWith(':') ? `sample_${part.slice(1)}` : part))
    .join('/');
}

/** The methods of every row with this pattern, HEAD wherever GET, in `Allow` order. */
function expectedAllow(pattern: string): string[] {
  const methods = new Set<string>(ROUTES.filter((row) => row.path === pattern).flatMap((row) => row.methods));
  if (methods.has('GET')) methods.add('HEAD');
  return ORDER.filter((method) => methods.has(method));
}

interface Answer {
  status: number;
  allow: string | null;
  body: string;
}

/** The admin routes take an admin key (and are not there without one). */
const ADMIN_KEY = 'mg_test_admin_key_0123456789';

describe('the route table, walked over HTTP', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_ENGINE: 'instant', MEDIAGATE_ADMIN_KEYS: ADMIN_KEY });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function send(method: string, path: string): Promise<Answer> {
    const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? '{}' : undefined;
    const res = await fetch(server.url + path, {
      method,
      headers: {
        authorization: `Bearer ${path.startsWith('/v1/admin/') ? ADMIN_KEY : server.keys[0]}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body }),
    });
    return { status: res.status, allow: res.headers.get('allow'), body: await res.text() };
  }

  /** The router's own 404 (no such route), in either envelope. */
  const noRoute = (answer: Answer): boolean => {
    if (answer.status !== 404 || answer.body === '') return false;
    const body = JSON.parse(answer.body) as { error?: { code: string; param: string }; code?: string };
    return body.error ? body.error.code === 'not_found' && body.error.param === '' : body.code === 'not_found';
  };

  it.each(ROUTES.map((row) => ({ row, label: `${row.methods.join(',')} ${row.path}` })))('$label answers its methods, HEAD wherever GET', async ({ row }) => {
    const path = samplePath(row.path);
    const methods = row.methods.includes('GET') ? [...row.methods, 'HEAD'] : row.methods;
    for (const method of methods) {
      const answer = await send(method, path);
      expect(answer.status, `${method} ${path}`).not.toBe(405);
      expect(noRoute(answer), `${method} ${path}: ${answer.body}`).toBe(false);
      expect(server.app.http.hasRoute({ method, url: row.path }), `${method} ${row.path} registered`).toBe(true);
    }
  });

  it.each([...new Set(ROUTES.map((row) => row.path))])("%s: every other method is a 405 with the path's Allow, in its family's envelope", async (pattern) => {
    const allow = expectedAllow(pattern);
    const family = ROUTES.find((row) => row.path === pattern)?.family;
    for (const method of ALL_METHODS.filter((m) => !allow.includes(m))) {
      const answer = await send(method, samplePath(pattern));
      expect(answer.status, `${method} ${pattern}`).toBe(405);
      expect(answer.allow?.split(', '), `${method} ${pattern}`).toEqual(allow);
      if (method === 'HEAD') continue; // no body
      const body = JSON.parse(answer.body) as { error?: { code: string }; code?: string; data?: unknown };
      if (family === 'image') expect(body).toMatchObject({ code: 'method_not_allowed', data: null });
      else expect(body.error).toMatchObject({ code: 'method_not_allowed', param: '' });
    }
  });

  it("counts every row's requests under its metrics label", async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    for (const row of ROUTES) {
      const label = row.metricsLabel ?? row.path;
      expect(text, label).toContain(`mediagate_http_requests_total{route="${label}",method="${row.methods[0] ?? ''}"`);
    }
  });
});

describe('the route table, read', () => {
  it('gives each row the family its path prefix gives an unknown path beside it', () => {
    for (const row of ROUTES) expect(row.family, row.path).toBe(familyOf(row.path));
  });

  it('declares each method of each pattern once', () => {
    const seen = ROUTES.flatMap((row) => row.methods.map((method) => `${method} ${row.path}`));
    expect(new Set(seen).size).toBe(seen.length);
  });
});

describe('a route registered other than from the table', () => {
  it('stops the build with undeclared_route', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-routes-'));
    const config = loadConfig({ PORT: '0', MEDIAGATE_DATA_DIR: dataDir, MEDIAGATE_API_KEYS: 'mg_test_key_alpha_0123456789', MEDIAGATE_WORKERS: 'false' });
    const app = await createMediagate(config, { logger: pino({ level: 'silent' }) });
    try {
      const handler = (): Promise<object> => Promise.resolve({});
      expect(() => app.http.get('/rogue', handler)).toThrow(expect.objectContaining({ code: 'undeclared_route' }));
      // A known path, an undeclared method.
      expect(() => app.http.delete('/v1/video/generations', handler)).toThrow(expect.objectContaining({ code: 'undeclared_route' }));
    } finally {
      await app.close(0);
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

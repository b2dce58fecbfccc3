/**
 * The OpenAPI document: lints clean under Redocly's strictest built-in ruleset (no warnings),
 * is a structurally valid OpenAPI 3.1 document whose schemas compile as JSON Schema 2020-12,
 * documents every keyed route (401 and 429 with Retry-After on each), offers only statuses an
 * operation can produce, and matches what the server answers. It is the fold of the route
 * rows: every row declares its operation (or why it has none), and every operation has its
 * request and 2xx response schemas.
 */
import { createConfig, detectSpec, lintFromString } from '@redocly/openapi-core';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS } from '../src/catalog/index.js';
import { MEDIA_FORMAT, URL_MAX_LENGTH_KEYWORD } from '../src/catalog/schema.js';
import { buildOpenApi } from '../src/http/docs/openapi.js';
import type { Route } from '../src/http/route.js';
import { ROUTES } from '../src/http/routes.js';
import { startServer, type TestServer } from './helpers/server.js';

const ADMIN_KEY = 'mg_test_admin_key_0123456789';

type Json = Record<string, unknown>;
const doc = buildOpenApi('https://mediagate.example.net', ROUTES, MODELS);
const paths = doc['paths'] as Record<string, Record<string, Json>>;
const schemas = (doc['components'] as { schemas: Record<string, Json> }).schemas;

/** `/v1/video/generations/:task_id` -> `/v1/video/generations/{task_id}`; `/v1/models/*` -> `/v1/models/{model}`. */
const openApiPath = (route: Route) => route.path.replace(/:([a-z_]+)/g, '{$1}').replace(/\/\*$/, '/{model}');

function ajv(): Ajv2020 {
  const validator = new Ajv2020({ strict: false, allErrors: true, discriminator: true });
  validator.addFormat('uri', true).addFormat('int64', true).addFormat(MEDIA_FORMAT, true).addKeyword(URL_MAX_LENGTH_KEYWORD);
  for (const [name, schema] of Object.entries(schemas)) validator.addSchema(schema, `#/components/schemas/${name}`);
  return validator;
}

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 and lints with no problem at all under recommended-strict', async () => {
    expect(doc['openapi']).toMatch(/^3\.1\.\d+$/);
    expect(detectSpec(doc)).toBe('oas3_1');
    // recommended-strict turns every warning of `recommended` into an error; `struct` checks
    // the document against the OpenAPI 3.1 structure.
    for (const ruleset of ['recommended', 'recommended-strict']) {
      const config = await createConfig({ extends: [ruleset] });
      const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
      expect(problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`)).toEqual([]);
    }
  });

  it('has schemas that compile as JSON Schema 2020-12', () => {
    const validator = new Ajv2020({ strict: true, strictTypes: false, strictTuples: false, allErrors: true, discriminator: true });
    validator.addFormat('uri', true).addFormat('int64', true).addFormat(MEDIA_FORMAT, true).addKeyword(URL_MAX_LENGTH_KEYWORD);
    for (const [name, schema] of Object.entries(schemas)) validator.addSchema(schema, `#/components/schemas/${name}`);
    for (const name of Object.keys(schemas)) expect(() => validator.getSchema(`#/components/schemas/${name}`), name).not.toThrow();
  });

  it('documents every keyed route, each with 401 and 429 (with Retry-After)', () => {
    const keyed = ROUTES.filter((route) => route.auth);
    expect(keyed.length).toBeGreaterThan(0);
    for (const route of keyed) {
      for (const method of route.methods) {
        const operation = paths[openApiPath(route)]?.[method.toLowerCase()] as { responses: Record<string, Json> } | undefined;
        expect(operation, `${method} ${route.path}`).toBeDefined();
        expect(operation?.responses['401'], `${method} ${route.path} 401`).toBeDefined();
        const tooMany = operation?.responses['429'] as { headers?: Json } | undefined;
        expect(tooMany?.headers?.['Retry-After'], `${method} ${route.path} 429 Retry-After`).toBeDefined();
      }
    }
  });

  it('offers cancelled only when a cancel operation exists', () => {
    const enums = (d: Json) => {
      const s = (d['components'] as { schemas: Record<string, Json> }).schemas;
      const video = ((s['VideoTask']?.['properties'] as Json)['status'] as { enum: string[] }).enum;
      const image = ((((s['ImageStatus']?.['properties'] as Json)['data'] as Json)['properties'] as Json)['status'] as { enum: string[] }).enum;
      return { video, image };
    };
    const hasCancel = ROUTES.some((route) => route.path.endsWith('/cancel'));
    expect(enums(doc).video.includes('cancelled')).toBe(hasCancel);
    expect(enums(doc).image.includes('CANCELLED')).toBe(hasCancel);
    const first = ROUTES[0];
    if (!first) throw new Error('empty route table');
    const withCancel = buildOpenApi('https://x.example', [...ROUTES, { ...first, path: '/v1/video/generations/:task_id/cancel' }], MODELS);
    expect(enums(withCancel)).toEqual({
      video: ['queued', 'processing', 'completed', 'failed', 'cancelled'],
      image: ['QUEUED', 'IN_PROGRESS', 'SUCCESS', 'FAILURE', 'CANCELLED'],
    });
  });
});

describe('the OpenAPI document against the server', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_RATE_LIMIT_PER_MIN: '5' });
  });
  afterAll(async () => server.close());

  it('is what /openapi.json serves, and the model operations answer as documented', async () => {
    const served = (await (await fetch(`${server.url}/openapi.json`)).json()) as Json;
    expect(served).toEqual(buildOpenApi(server.url, ROUTES, MODELS));
    const validator = ajv();
    const auth = { authorization: `Bearer ${server.keys[0]}` };
    const list = await fetch(`${server.url}/v1/models`, { headers: auth });
    expect(validator.validate({ $ref: '#/components/schemas/ModelList' }, await list.json()), JSON.stringify(validator.errors)).toBe(true);
    const one = await fetch(`${server.url}/v1/models/vendora/famw-2.7-t2v`, { headers: auth });
    expect(one.status).toBe(200);
    expect(validator.validate({ $ref: '#/components/schemas/Model' }, await one.json()), JSON.stringify(validator.errors)).toBe(true);
    const unauthorized = await fetch(`${server.url}/v1/models`);
    expect(unauthorized.status).toBe(401);
    expect(validator.validate({ $ref: '#/components/schemas/VideoError' }, await unauthorized.json())).toBe(true);
    let limited: Response | undefined;
    for (let i = 0; i < 20 && limited === undefined; i += 1) {
      const res = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.keys[1]}` } });
      if (res.status === 429) limited = res;
      else await res.arrayBuffer();
    }
    expect(limited?.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(validator.validate({ $ref: '#/components/schemas/VideoError' }, await limited?.json())).toBe(true);
  });
});

/** Rows the API description must have but lacks: a row under /v1 or taking a key without an operation, or one saying nothing. */
function undeclared(routes: readonly Route[]): string[] {
  return routes
    .filter((route) => {
      const operation: unknown = route.operation;
      if (typeof operation === 'function') return false;
      const why = (operation as { undocumented?: unknown } | undefined)?.undocumented;
      return route.auth !== false || route.path.startsWith('/v1/') || typeof why !== 'string' || why.trim() === '';
    })
    .map((route) => `${route.methods.join(',')} ${route.path}`);
}

type Operation = {
  parameters?: { name: string; in: string; required?: boolean; example?: unknown; schema?: Json }[];
  requestBody?: { content: Record<string, { schema?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
};
const operations = Object.entries(paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ label: `${method} ${path}`, operation: operation as Operation })),
);

describe('the document is the fold of the route rows', () => {
  it('has every row declare its operation; only rows outside /v1 and without a key say why they have none', () => {
    expect(undeclared(ROUTES)).toEqual([]);
    // The check catches a new front door without an operation, and an opt-out that says nothing.
    const row = ROUTES.find((route) => route.path === '/v1/models');
    if (!row) throw new Error('no /v1/models row');
    const front = { ...row, path: '/v1/videos', operation: { undocumented: 'later' } };
    const silent = { ...row, path: '/status', auth: false, operation: { undocumented: ' ' } };
    expect(undeclared([...ROUTES, front, silent])).toEqual(['GET /v1/videos', 'GET /status']);
    expect(ROUTES.filter((route) => route.auth).every((route) => typeof route.operation === 'function')).toBe(true);
  });

  it.each(operations)('$label has its 2xx response schema', ({ operation }) => {
    const success = Object.entries(operation.responses).filter(([status]) => /^2\d\d$/.test(status));
    expect(success.length).toBeGreaterThan(0);
    for (const [, answer] of success) {
      const media = Object.values(answer.content ?? {});
      expect(media.length).toBeGreaterThan(0);
      for (const { schema } of media) expect(schema).toBeDefined();
    }
  });

  it.each(
    ROUTES.filter((route) => typeof route.operation === 'function').flatMap((route) =>
      route.methods.map((method) => ({ route, method, label: `${method} ${route.path}` })),
    ),
  )('$label declares its path parameters, and its body schema when it reads one', ({ route, method }) => {
    const operation = paths[openApiPath(route)]?.[method.toLowerCase()] as Operation | undefined;
    expect(operation).toBeDefined();
    const declared = (operation?.parameters ?? []).filter((param) => param.in === 'path').map((param) => param.name);
    const inPattern = [...route.path.matchAll(/:([a-z_]+)/g)].map((match) => match[1]);
    expect(declared.sort()).toEqual([...inPattern, ...(route.path.endsWith('/*') ? ['model'] : [])].sort());
    for (const param of operation?.parameters ?? []) expect(param.schema, param.name).toBeDefined();
    const readsBody = (method === 'POST' || method === 'PATCH' || method === 'PUT') && !route.ignoresBody;
    expect(operation?.requestBody?.content['application/json']?.schema !== undefined).toBe(readsBody);
  });
});

describe('the documented query parameters against the handlers', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_ADMIN_KEYS: ADMIN_KEY });
  });
  afterAll(async () => server.close());

  // The handlers keep their own checks (their codes and messages are the API's); the documented
  // bounds must be theirs: out of the schema is a 400 on that parameter, at its bound is not.
  const queried = operations.filter(
    ({ label, operation }) => label.startsWith('get ') && !label.includes('{') && (operation.parameters ?? []).some((p) => p.in === 'query'),
  );

  it.each(queried)('$label refuses what its query schema refuses', async ({ label, operation }) => {
    const path = label.slice('get '.length);
    const key = path.startsWith('/v1/admin/') ? ADMIN_KEY : server.keys[0];
    // The other required parameters, at their documented examples: each one is probed alone.
    const others = (name: string): string =>
      (operation.parameters ?? [])
        .filter((p) => p.in === 'query' && p.required === true && p.name !== name && p.example !== undefined)
        .map((p) => `&${p.name}=${encodeURIComponent(String(p.example))}`)
        .join('');
    const ask = async (name: string, value: string) => {
      const res = await fetch(`${server.url}${path}?${name}=${encodeURIComponent(value)}${others(name)}`, { headers: { authorization: `Bearer ${key}` } });
      const text = await res.text();
      return { status: res.status, body: (res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : {}) as { error?: { param?: string } } };
    };
    let probed = 0;
    for (const param of (operation.parameters ?? []).filter((p) => p.in === 'query')) {
      const schema = param.schema ?? {};
      const refused = schema['enum']
        ? ['no-such-value']
        : schema['type'] === 'integer'
          ? [
              'x',
              ...(typeof schema['maximum'] === 'number' ? [String(schema['maximum'] + 1)] : []),
              ...(typeof schema['minimum'] === 'number' ? [String(schema['minimum'] - 1)] : []),
            ]
          : [];
      for (const value of refused) {
        const answer = await ask(param.name, value);
        expect(answer.status, `${param.name}=${value}`).toBe(400);
        if (answer.body.error) expect(answer.body.error.param, `${param.name}=${value}`).toBe(param.name);
        probed += 1;
      }
      const accepted = [
        ...(typeof schema['maximum'] === 'number' ? [String(schema['maximum'])] : []),
        ...((schema['enum'] as unknown[] | undefined) ?? []).filter((v): v is string => typeof v === 'string'),
      ];
      for (const value of accepted) expect((await ask(param.name, value)).status, `${param.name}=${value}`).toBe(200);
    }
    expect(probed).toBeGreaterThan(0);
  });
});

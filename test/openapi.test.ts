/**
 * The OpenAPI document: lints clean under Redocly's strictest built-in ruleset (no warnings),
 * is a structurally valid OpenAPI 3.1 document whose schemas compile as JSON Schema 2020-12,
 * documents every keyed route (401 and 429 with Retry-After on each), offers only statuses an
 * operation can produce, and matches what the server answers.
 */
import { createConfig, detectSpec, lintFromString } from '@redocly/openapi-core';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS } from '../src/catalog/index.js';
import { MEDIA_FORMAT, URL_MAX_LENGTH_KEYWORD } from '../src/catalog/schema.js';
import { buildOpenApi } from '../src/http/openapi.js';
import type { Route } from '../src/http/route.js';
import { ROUTES } from '../src/http/routes.js';
import { startServer, type TestServer } from './helpers/server.js';

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

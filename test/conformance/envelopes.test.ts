/**
 * Conformance: status codes and envelopes of both families (decisions §1; decisions §2,
 * body shape; decisions §5, task visibility; decisions §7, authentication) and the seed's request-size rule 2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import {
  Api,
  IMAGE_CREATE,
  VIDEO_CREATE,
  dataUrl,
  expectImageCreated,
  expectImageError,
  expectQueuedVideoTask,
  expectVideoError,
  expectVideoErrorShape,
  expectImageErrorShape,
  field,
  largePngBuffer,
  raw,
  type Body,
  type HttpResult,
  type JsonObject,
} from './support.js';

const VIDEO_BODY: JsonObject = { model: 'vendora/famw-2.7-t2v', prompt: 'a paper boat on a stream', duration: 2, resolution: '480p' };
const IMAGE_BODY: JsonObject = { model: 'vendora/famz-image-spicy', prompt: 'a paper boat on a stream', size: '256x256' };

let server: TestServer;
let api: Api;
/** Tasks created with key A. */
let videoIdA: string;
let imageIdA: string;

beforeAll(async () => {
  // Validation answers before any render: no workers, so the tasks it queues cost no CPU.
  server = await startServer({ MEDIAGATE_WORKERS: 'false' });
  api = new Api(server);
  videoIdA = expectQueuedVideoTask(await api.createVideo(VIDEO_BODY), 'vendora/famw-2.7-t2v');
  imageIdA = expectImageCreated(await api.createImage(IMAGE_BODY));
});

afterAll(async () => {
  await server?.close();
});

type Family = 'video' | 'image';

interface Operation {
  readonly name: string;
  readonly family: Family;
  readonly run: (options: { key?: string | null; authorization?: string }) => Promise<HttpResult>;
  /** Expected status with a valid key A. */
  readonly okStatus: number;
}

const OPERATIONS: readonly Operation[] = [
  { name: 'POST /v1/video/generations', family: 'video', run: (o) => api.createVideo(VIDEO_BODY, o), okStatus: 200 },
  { name: 'GET /v1/video/generations/{id}', family: 'video', run: (o) => api.getVideo(videoIdA, o), okStatus: 200 },
  { name: 'POST /v1/images/generations/async', family: 'image', run: (o) => api.createImage(IMAGE_BODY, o), okStatus: 200 },
  { name: 'GET /v1/images/generations/async/{id}', family: 'image', run: (o) => api.getImage(imageIdA, o), okStatus: 200 },
];

function expectFamilyError(family: Family, res: HttpResult, status: number, code: string, param: string, type?: string): void {
  if (family === 'video') expectVideoError(res, status, code, param, type);
  else expectImageError(res, status, code);
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
}

function expect401(family: Family, res: HttpResult): void {
  expectFamilyError(family, res, 401, 'invalid_api_key', 'Authorization', 'authentication_error');
}

describe('authentication (decisions §1, decisions §7)', () => {
  const rejected: ReadonlyArray<readonly [string, (key: string) => string | null]> = [
    ['no Authorization header', () => null],
    ['Bearer with an unknown key', () => 'Bearer mg_not_a_real_key_0123456789'],
    ['Bearer with the key plus one character', (key) => `Bearer ${key}x`],
    ['Basic scheme carrying the key', (key) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`],
    ['Basic scheme with the raw key', (key) => `Basic ${key}`],
    ['the bare key without a scheme', (key) => key],
    ['"Bearer" with no key', () => 'Bearer'],
    ['"Bearer " with an empty key', () => 'Bearer '],
    ['Token scheme', (key) => `Token ${key}`],
  ];
  const accepted: ReadonlyArray<readonly [string, (key: string) => string]> = [
    ['Bearer <key>', (key) => `Bearer ${key}`],
    ['bearer <key> (lowercase scheme)', (key) => `bearer ${key}`],
    ['BEARER <key> (uppercase scheme)', (key) => `BEARER ${key}`],
  ];

  describe.each(OPERATIONS.map((op) => ({ name: op.name, op })))('$name', ({ op }) => {
    it.each(rejected.map(([label, header]) => ({ label, header })))('$label -> 401 invalid_api_key', async ({ header }) => {
      const value = header(api.keyA);
      const res = await op.run(value === null ? { key: null } : { authorization: value });
      expect401(op.family, res);
    });
    it.each(accepted.map(([label, header]) => ({ label, header })))('$label -> accepted', async ({ header }) => {
      const res = await op.run({ authorization: header(api.keyA) });
      expect(res.status, res.text).toBe(op.okStatus);
    });
  });

  it('an invalid body without a key is 401, not 400 (video)', async () => {
    expect401('video', await api.createVideo({ prompt: 42 }, { key: null }));
  });
  it('an invalid body without a key is 401, not 400 (image)', async () => {
    expect401('image', await api.createImage({ prompt: 42 }, { key: null }));
  });
  it('an unknown task id without a key is 401, not 404 (video)', async () => {
    expect401('video', await api.getVideo('unknowntaskid0123456789', { key: null }));
  });
  it('an unknown task id without a key is 401, not 404 (image)', async () => {
    expect401('image', await api.getImage('unknowntaskid0123456789', { key: null }));
  });
});

describe('unknown and foreign task ids (decisions §1, decisions §5)', () => {
  it('video: unknown id -> 404 task_not_found, param task_id', async () => {
    expectFamilyError('video', await api.getVideo('AAAAAAAAAAAAAAAAAAAAAAAA'), 404, 'task_not_found', 'task_id');
  });
  it('video: id with URL-unsafe characters -> 404 task_not_found', async () => {
    expectFamilyError('video', await api.getVideo('no such task!'), 404, 'task_not_found', 'task_id');
  });
  it('image: unknown id -> 404 {code:"task_not_found", data:null}', async () => {
    expectFamilyError('image', await api.getImage('AAAAAAAAAAAAAAAAAAAAAAAA'), 404, 'task_not_found', '');
  });
  it('video: a task created with key A is 404 for key B', async () => {
    expectFamilyError('video', await api.getVideo(videoIdA, { key: api.keyB }), 404, 'task_not_found', 'task_id');
    const own = await api.getVideo(videoIdA, { key: api.keyA });
    expect(own.status).toBe(200);
  });
  it('image: a task created with key A is 404 for key B', async () => {
    expectFamilyError('image', await api.getImage(imageIdA, { key: api.keyB }), 404, 'task_not_found', '');
    const own = await api.getImage(imageIdA, { key: api.keyA });
    expect(own.status).toBe(200);
  });
  it('video: a task created with key B is visible to key B only', async () => {
    const id = expectQueuedVideoTask(await api.createVideo(VIDEO_BODY, { key: api.keyB }), 'vendora/famw-2.7-t2v');
    expect((await api.getVideo(id, { key: api.keyB })).status).toBe(200);
    expectFamilyError('video', await api.getVideo(id, { key: api.keyA }), 404, 'task_not_found', 'task_id');
  });
  it('an image task id is not a video task (video GET -> 404 task_not_found)', async () => {
    expectFamilyError('video', await api.getVideo(imageIdA), 404, 'task_not_found', 'task_id');
  });
  it('a video task id is not an image task (image GET -> 404 task_not_found)', async () => {
    expectFamilyError('image', await api.getImage(videoIdA), 404, 'task_not_found', '');
  });
});

describe('request body shape (decisions §2: a body that is not a JSON object -> invalid_parameter body)', () => {
  const bodies: ReadonlyArray<readonly [string, Body]> = [
    ['malformed JSON', raw('{"model": "vendora/famw-2.7-t2v", "prompt": ')],
    ['trailing garbage after JSON', raw('{"model":"vendora/famw-2.7-t2v","prompt":"x"} trailing')],
    ['empty body', raw('')],
    ['[]', []],
    ['[{...}] (an object inside an array)', [VIDEO_BODY]],
    ['"str"', 'str'],
    ['null', null],
    ['123', 123],
    ['true', true],
  ];
  describe.each([
    { family: 'video' as const, path: VIDEO_CREATE },
    { family: 'image' as const, path: IMAGE_CREATE },
  ])('$path', ({ family, path }) => {
    it.each(bodies.map(([label, body]) => ({ label, body })))('$label -> 400 invalid_parameter body', async ({ body }) => {
      expectFamilyError(family, await api.request('POST', path, { body }), 400, 'invalid_parameter', 'body');
    });
  });
});

describe('prototype-poisoning keys are rejected with a 400 in the family envelope, never a 500', () => {
  const poisoned = (base: JsonObject, key: string): string => `${JSON.stringify(base).slice(0, -1)},"${key}":{"polluted":true}}`;
  describe.each([
    { family: 'video' as const, path: VIDEO_CREATE, base: VIDEO_BODY },
    { family: 'image' as const, path: IMAGE_CREATE, base: IMAGE_BODY },
  ])('$path', ({ family, path, base }) => {
    it.each(['__proto__', 'constructor'])('top-level key %s -> 400 unsupported_parameter or invalid_parameter body', async (key) => {
      const res = await api.request('POST', path, { body: raw(poisoned(base, key)) });
      expect(res.status, res.text).toBe(400);
      const code = family === 'video' ? field(field(res.json, 'error'), 'code') : field(res.json, 'code');
      expect(['unsupported_parameter', 'invalid_parameter']).toContain(code);
      if (family === 'video') {
        const param = field(field(res.json, 'error'), 'param');
        expect(code === 'unsupported_parameter' ? param === key : param === 'body', res.text).toBe(true);
        expectVideoErrorShape(res);
      } else {
        expectImageErrorShape(res);
      }
    });
  });
});

describe('content type (decisions §1: not JSON -> 415 invalid_parameter Content-Type)', () => {
  const jsonText = (family: Family): string => JSON.stringify(family === 'video' ? VIDEO_BODY : IMAGE_BODY);
  describe.each([
    { family: 'video' as const, path: VIDEO_CREATE },
    { family: 'image' as const, path: IMAGE_CREATE },
  ])('$path', ({ family, path }) => {
    it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml'])(
      'Content-Type %s with a JSON payload -> 415',
      async (contentType) => {
        const res = await api.request('POST', path, { body: raw(jsonText(family)), contentType });
        expectFamilyError(family, res, 415, 'invalid_parameter', 'Content-Type');
      },
    );
    it('Content-Type application/json; charset=utf-8 -> 200', async () => {
      const res = await api.request('POST', path, { body: raw(jsonText(family)), contentType: 'application/json; charset=utf-8' });
      expect(res.status, res.text).toBe(200);
    });
  });
});

describe('content type absent (decisions §1: not JSON -> 415)', () => {
  it.each([
    { family: 'video' as const, path: VIDEO_CREATE, body: VIDEO_BODY },
    { family: 'image' as const, path: IMAGE_CREATE, body: IMAGE_BODY },
  ])('$path with a JSON payload and no Content-Type header -> 415 invalid_parameter Content-Type', async ({ family, path, body }) => {
    // A byte body makes fetch send no Content-Type of its own.
    const res = await fetch(server.url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.keyA}` },
      body: new TextEncoder().encode(JSON.stringify(body)),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    expectFamilyError(family, { status: res.status, headers: res.headers, text, json }, 415, 'invalid_parameter', 'Content-Type');
  });
});

describe('task ids (decisions §5: opaque, URL-safe, unguessable)', () => {
  it('30 video tasks get 30 distinct URL-safe ids', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 30; i += 1) ids.add(expectQueuedVideoTask(await api.createVideo(VIDEO_BODY), 'vendora/famw-2.7-t2v'));
    expect(ids.size).toBe(30);
  });
  it('30 image tasks get 30 distinct URL-safe ids', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 30; i += 1) ids.add(expectImageCreated(await api.createImage(IMAGE_BODY)));
    expect(ids.size).toBe(30);
  });
});

describe('body size (decisions §1 413; seed rule 2: vendord/v6/reference-to-video at most 20 MB)', () => {
  const FORTY_MB = 40 * 1024 * 1024;
  it('video: a ~40 MB body -> 413 invalid_parameter body', async () => {
    const text = `{"model":"vendora/famw-2.7-t2v","prompt":"${'a'.repeat(FORTY_MB)}"}`;
    expectFamilyError('video', await api.request('POST', VIDEO_CREATE, { body: raw(text) }), 413, 'invalid_parameter', 'body');
  });
  it('image: a ~40 MB body -> 413 invalid_parameter in the image envelope', async () => {
    const text = `{"model":"vendora/famz-image-spicy","prompt":"${'a'.repeat(FORTY_MB)}"}`;
    expectFamilyError('image', await api.request('POST', IMAGE_CREATE, { body: raw(text) }), 413, 'invalid_parameter', 'body');
  });

  /** A valid request of about 21.5 MB: above 20 MB (and 20 MiB) but below the default cap (more than 20 MB). */
  async function bigReferenceBody(model: string): Promise<string> {
    const png = await largePngBuffer(2400, 2240);
    const text = JSON.stringify({ model, prompt: 'the subject of @image1 dancing', images: [dataUrl(png, 'image/png')] });
    // Above 20 MiB (hence also above 20,000,000 bytes) by more than 0.5 MB, below 30 MB.
    expect(text.length).toBeGreaterThan(20 * 1024 * 1024 + 512 * 1024);
    expect(text.length).toBeLessThan(30_000_000);
    return text;
  }

  it('vendord/v6/reference-to-video: a ~21 MB body -> 400 unsupported_value body', async () => {
    const text = await bigReferenceBody('vendord/v6/reference-to-video');
    expectFamilyError('video', await api.request('POST', VIDEO_CREATE, { body: raw(text) }), 400, 'unsupported_value', 'body');
  });
  it('vendora/famw-3.0-ref2v-spicy: the same ~21 MB body is accepted (the 20 MB rule is model-specific)', async () => {
    const text = await bigReferenceBody('vendora/famw-3.0-ref2v-spicy');
    expectQueuedVideoTask(await api.request('POST', VIDEO_CREATE, { body: raw(text) }), 'vendora/famw-3.0-ref2v-spicy');
  });
});

describe('unknown routes and methods (decisions §1: 404 not_found / 405 method_not_allowed in the family envelope)', () => {
  const notFound: ReadonlyArray<readonly [string, string, Family]> = [
    ['GET', '/v1/nope', 'video'],
    ['GET', '/nope', 'video'],
    // `/` leads to the web console; a path beside it is still unknown.
    ['GET', '/console/nope', 'video'],
    ['POST', '/v1/video/generation', 'video'],
    ['POST', '/v2/video/generations', 'video'],
    ['GET', '/v1/images/nope', 'image'],
    // POST /v1/images/generations is the OpenAI-compatible front door (video envelope: OpenAI's shape).
    ['POST', '/v1/images/edits', 'image'],
    ['GET', '/v1/images/generations/async/a/b', 'image'],
  ];
  it.each(notFound.map(([method, path, family]) => ({ method, path, family })))(
    '$method $path -> 404 not_found ($family envelope)',
    async ({ method, path, family }) => {
      const res = await api.request(method, path, method === 'POST' ? { body: {} } : {});
      expectFamilyError(family, res, 404, 'not_found', '');
    },
  );

  const notAllowed: ReadonlyArray<readonly [string, string, Family]> = [
    ['DELETE', '/v1/video/generations', 'video'],
    ['PATCH', '/v1/video/generations', 'video'],
    ['PUT', '/v1/video/generations', 'video'],
    ['PUT', '/v1/images/generations/async', 'image'],
    ['DELETE', '/v1/images/generations/async', 'image'],
    ['PATCH', '/v1/images/generations/async', 'image'],
    ['DELETE', '/v1/images/generations', 'video'],
    ['DELETE', '/v1/videos', 'video'],
  ];
  it.each(notAllowed.map(([method, path, family]) => ({ method, path, family })))(
    '$method $path -> 405 method_not_allowed ($family envelope)',
    async ({ method, path, family }) => {
      const res = await api.request(method, path, method === 'DELETE' ? {} : { body: {} });
      expectFamilyError(family, res, 405, 'method_not_allowed', '');
    },
  );
});

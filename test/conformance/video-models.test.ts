/**
 * Conformance: `POST /v1/video/generations` validation for all 21 video models.
 *
 * Cases are generated from `video-model-table.ts`, a hand transcription of the seed's video model
 * table and decisions §2 and decisions §3 (not of `src/`). Every case is one HTTP request to a real
 * server; a valid request must yield a queued task, an invalid one a 400 with the exact `code`
 * and `param`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { Api, expectQueuedVideoTask, expectVideoError, field, imageDataUrl, largePngBuffer, dataUrl, type Json, type JsonObject } from './support.js';
import {
  ALL_LISTED_ASPECT_RATIOS,
  ALL_LISTED_RESOLUTIONS,
  ALL_OPTIONAL_PARAMS,
  IMAGE_MODEL_IDS,
  VIDEO_MODELS,
  accepts,
  type ArrayParam,
  type MediaParam,
  type OptionalParam,
  type VideoModelRow,
} from './video-model-table.js';

// ---------------------------------------------------------------------------------------------
// Fixtures (top-level await: the case tables below embed them)
// ---------------------------------------------------------------------------------------------

const PNG_400 = await imageDataUrl(400, 400, 'png');
const JPEG_400 = await imageDataUrl(400, 400, 'jpeg');
const IMAGE_URL = 'https://example.com/input.png';
const VIDEO_URL = 'https://example.com/reference.mp4';
const AUDIO_URL = 'https://example.com/reference.mp3';
const VIDEO_DATA_URL = 'data:video/mp4;base64,AAAAIGZ0eXBpc29tAAACAGlzb21pc28yYXZjMW1wNDE=';
const AUDIO_DATA_URL = 'data:audio/mpeg;base64,SUQzBAAAAAAAI1RTU0UAAAAPAAADTGF2ZjU4LjI5LjEwMAAAAAAAAAAAAAAA';
const BROKEN_BASE64 = 'data:image/png;base64,%%%%not*base64%%%%';
const PROMPT = 'a red fox running through fresh snow at dawn';

let server: TestServer;
let api: Api;

beforeAll(async () => {
  // Validation answers before any render: no workers, so the tasks it queues cost no CPU.
  server = await startServer({ MEDIAGATE_WORKERS: 'false' });
  api = new Api(server);
});

afterAll(async () => {
  await server?.close();
});

// ---------------------------------------------------------------------------------------------
// Case model
// ---------------------------------------------------------------------------------------------

type Outcome = { readonly ok: true } | { readonly ok: false; readonly code: string; readonly param: string };

interface Case {
  readonly name: string;
  readonly body: JsonObject;
  readonly outcome: Outcome;
}

const OK: Outcome = { ok: true };
const fail = (code: string, param: string): Outcome => ({ ok: false, code, param });
const missing = (param: string): Outcome => fail('missing_parameter', param);
const invalid = (param: string): Outcome => fail('invalid_parameter', param);
const unsupportedParam = (param: string): Outcome => fail('unsupported_parameter', param);
const unsupportedValue = (param: string): Outcome => fail('unsupported_value', param);

/** A well-typed, valid sample value for a parameter on a row that accepts it. */
function sampleValue(row: VideoModelRow, param: OptionalParam): Json {
  switch (param) {
    case 'negative_prompt':
      return 'blurry, low quality';
    case 'image':
    case 'end_image':
      return PNG_400;
    case 'images':
      return [PNG_400];
    case 'videos':
      return [VIDEO_URL];
    case 'audios':
      return [AUDIO_URL];
    case 'audio':
      return AUDIO_URL;
    case 'audio_enable':
    case 'prompt_extend':
      return true;
    case 'aspect_ratio':
      return typeof row.aspectRatio === 'object' ? (row.aspectRatio.values[0] ?? '16:9') : '16:9';
    case 'extra':
      return {};
  }
}

function minimalBody(row: VideoModelRow): JsonObject {
  const body: JsonObject = { model: row.id, prompt: PROMPT };
  for (const param of row.required) body[param] = sampleValue(row, param);
  if (row.atLeastOneOf !== undefined) body['images'] = [PNG_400];
  return body;
}

function withField(row: VideoModelRow, key: string, value: Json): JsonObject {
  return { ...minimalBody(row), [key]: value };
}

function without(row: VideoModelRow, key: string): JsonObject {
  const body = minimalBody(row);
  delete body[key];
  return body;
}

function show(value: Json): string {
  const text = JSON.stringify(value);
  return text.length > 48 ? `${text.slice(0, 45)}...` : text;
}

function swapCase(text: string): string {
  return [...text].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
}

function arrayItems(param: ArrayParam, count: number): Json[] {
  const ext = param === 'images' ? 'png' : param === 'videos' ? 'mp4' : 'mp3';
  return Array.from({ length: count }, (_, i) => `https://example.com/${param}-${i + 1}.${ext}`);
}

// ---------------------------------------------------------------------------------------------
// Case generators, one per behaviour
// ---------------------------------------------------------------------------------------------

function requiredCases(row: VideoModelRow): Case[] {
  const cases: Case[] = [
    { name: 'model absent -> missing_parameter model', body: without(row, 'model'), outcome: missing('model') },
    { name: 'prompt absent -> missing_parameter prompt', body: without(row, 'prompt'), outcome: missing('prompt') },
    { name: 'prompt "" -> invalid_parameter prompt', body: withField(row, 'prompt', ''), outcome: invalid('prompt') },
    { name: 'prompt whitespace only -> invalid_parameter prompt', body: withField(row, 'prompt', '  \t\n '), outcome: invalid('prompt') },
  ];
  for (const param of row.required) {
    cases.push({ name: `required ${param} absent -> missing_parameter ${param}`, body: without(row, param), outcome: missing(param) });
  }
  if (row.atLeastOneOf !== undefined) {
    cases.push({ name: 'none of images/videos/audios -> missing_parameter images', body: without(row, 'images'), outcome: missing('images') });
    const allEmpty: JsonObject = { ...without(row, 'images') };
    for (const param of row.atLeastOneOf) allEmpty[param] = [];
    cases.push({ name: 'images/videos/audios all [] -> missing_parameter images', body: allEmpty, outcome: missing('images') });
    for (const param of row.atLeastOneOf) {
      const only: JsonObject = { ...without(row, 'images'), [param]: sampleValue(row, param) };
      cases.push({ name: `only ${param} given -> 200`, body: only, outcome: OK });
    }
  }
  return cases;
}

function optionalAcceptedCases(row: VideoModelRow): Case[] {
  const cases: Case[] = [];
  const all: JsonObject = minimalBody(row);
  for (const param of row.optional) {
    cases.push({ name: `optional ${param} ${show(sampleValue(row, param))} -> 200`, body: withField(row, param, sampleValue(row, param)), outcome: OK });
    all[param] = sampleValue(row, param);
  }
  all['duration'] = row.duration === 'unchecked' ? 5 : row.duration.min;
  all['resolution'] = row.resolution === 'unchecked' ? '720p' : (row.resolution.values[0] ?? '');
  all['seed'] = 42;
  cases.push({ name: 'every accepted parameter together -> 200', body: all, outcome: OK });
  return cases;
}

function durationCases(row: VideoModelRow): Case[] {
  const cases: Case[] = [];
  if (row.duration === 'unchecked') {
    for (const value of [1, 5, 31, 60]) cases.push({ name: `duration ${value} (unchecked row) -> 200`, body: withField(row, 'duration', value), outcome: OK });
    for (const value of [0, -5])
      cases.push({
        name: `duration ${value} (not positive) -> unsupported_value duration`,
        body: withField(row, 'duration', value),
        outcome: unsupportedValue('duration'),
      });
  } else {
    const { min, max } = row.duration;
    cases.push({ name: `duration min ${min} -> 200`, body: withField(row, 'duration', min), outcome: OK });
    cases.push({ name: `duration max ${max} -> 200`, body: withField(row, 'duration', max), outcome: OK });
    cases.push({
      name: `duration min-1 ${min - 1} -> unsupported_value duration`,
      body: withField(row, 'duration', min - 1),
      outcome: unsupportedValue('duration'),
    });
    cases.push({
      name: `duration max+1 ${max + 1} -> unsupported_value duration`,
      body: withField(row, 'duration', max + 1),
      outcome: unsupportedValue('duration'),
    });
    if (min - 1 !== 0)
      cases.push({ name: 'duration 0 -> unsupported_value duration', body: withField(row, 'duration', 0), outcome: unsupportedValue('duration') });
    cases.push({ name: 'duration 1000 -> unsupported_value duration', body: withField(row, 'duration', 1000), outcome: unsupportedValue('duration') });
  }
  for (const value of [5.5, '5', null, true, [5]] as Json[]) {
    cases.push({ name: `duration ${show(value)} -> invalid_parameter duration`, body: withField(row, 'duration', value), outcome: invalid('duration') });
  }
  return cases;
}

function resolutionCases(row: VideoModelRow): Case[] {
  const cases: Case[] = [];
  if (row.resolution === 'unchecked') {
    for (const value of ['720p', '720P', '4k', 'any-resolution-string']) {
      cases.push({ name: `resolution ${show(value)} (unchecked row) -> 200`, body: withField(row, 'resolution', value), outcome: OK });
    }
  } else {
    const values = row.resolution.values;
    for (const value of values) cases.push({ name: `resolution ${value} -> 200`, body: withField(row, 'resolution', value), outcome: OK });
    for (const value of values) {
      const wrongCase = swapCase(value);
      if (!values.includes(wrongCase)) {
        cases.push({
          name: `resolution ${wrongCase} (wrong case) -> unsupported_value resolution`,
          body: withField(row, 'resolution', wrongCase),
          outcome: unsupportedValue('resolution'),
        });
      }
    }
    for (const value of [...ALL_LISTED_RESOLUTIONS.filter((v) => !values.includes(v)), '999p']) {
      cases.push({
        name: `resolution ${value} (not listed) -> unsupported_value resolution`,
        body: withField(row, 'resolution', value),
        outcome: unsupportedValue('resolution'),
      });
    }
  }
  for (const value of [720, null, ['720p']] as Json[]) {
    cases.push({
      name: `resolution ${show(value)} -> invalid_parameter resolution`,
      body: withField(row, 'resolution', value),
      outcome: invalid('resolution'),
    });
  }
  return cases;
}

function aspectRatioCases(row: VideoModelRow): Case[] {
  const cases: Case[] = [];
  const spec = row.aspectRatio;
  if (spec === 'not-accepted') {
    for (const value of ['16:9', 'adaptive']) {
      cases.push({
        name: `aspect_ratio ${value} (not configurable) -> unsupported_parameter aspect_ratio`,
        body: withField(row, 'aspect_ratio', value),
        outcome: unsupportedParam('aspect_ratio'),
      });
    }
    return cases;
  }
  if (spec === 'unchecked') {
    for (const value of ['16:9', 'adaptive', '7:5', 'any-aspect-string']) {
      cases.push({ name: `aspect_ratio ${show(value)} (unchecked row) -> 200`, body: withField(row, 'aspect_ratio', value), outcome: OK });
    }
  } else {
    for (const value of spec.values) cases.push({ name: `aspect_ratio ${value} -> 200`, body: withField(row, 'aspect_ratio', value), outcome: OK });
    for (const value of [...ALL_LISTED_ASPECT_RATIOS.filter((v) => !spec.values.includes(v)), '2:1', 'ADAPTIVE']) {
      if (spec.values.includes(value)) continue;
      cases.push({
        name: `aspect_ratio ${value} (not listed) -> unsupported_value aspect_ratio`,
        body: withField(row, 'aspect_ratio', value),
        outcome: unsupportedValue('aspect_ratio'),
      });
    }
  }
  for (const value of [1.5, null, ['16:9']] as Json[]) {
    cases.push({
      name: `aspect_ratio ${show(value)} -> invalid_parameter aspect_ratio`,
      body: withField(row, 'aspect_ratio', value),
      outcome: invalid('aspect_ratio'),
    });
  }
  return cases;
}

function seedCases(row: VideoModelRow): Case[] {
  const cases: Case[] = [
    { name: 'seed -1 (random) -> 200', body: withField(row, 'seed', -1), outcome: OK },
    { name: 'seed 0 -> 200', body: withField(row, 'seed', 0), outcome: OK },
  ];
  const { min, max } = row.seed;
  if (min === null) {
    cases.push({ name: 'seed -1000 (no lower bound) -> 200', body: withField(row, 'seed', -1000), outcome: OK });
  } else {
    cases.push({ name: `seed min ${min} -> 200`, body: withField(row, 'seed', min), outcome: OK });
    cases.push({ name: `seed min-1 ${min - 1} -> unsupported_value seed`, body: withField(row, 'seed', min - 1), outcome: unsupportedValue('seed') });
  }
  if (max === null) {
    for (const value of [2147483648, 4294967297, Number.MAX_SAFE_INTEGER]) {
      cases.push({ name: `seed ${value} (no upper bound) -> 200`, body: withField(row, 'seed', value), outcome: OK });
    }
  } else {
    cases.push({ name: `seed max ${max} -> 200`, body: withField(row, 'seed', max), outcome: OK });
    cases.push({ name: `seed max+1 ${max + 1} -> unsupported_value seed`, body: withField(row, 'seed', max + 1), outcome: unsupportedValue('seed') });
  }
  for (const value of [1.5, '42', null, true] as Json[]) {
    cases.push({ name: `seed ${show(value)} -> invalid_parameter seed`, body: withField(row, 'seed', value), outcome: invalid('seed') });
  }
  return cases;
}

function unsupportedParameterCases(row: VideoModelRow): Case[] {
  const cases: Case[] = [];
  for (const param of ALL_OPTIONAL_PARAMS) {
    if (accepts(row, param) || param === 'aspect_ratio') continue; // aspect_ratio: see aspectRatioCases
    cases.push({
      name: `${param} (not in row) -> unsupported_parameter ${param}`,
      body: withField(row, param, sampleValue(row, param)),
      outcome: unsupportedParam(param),
    });
  }
  const strangers: ReadonlyArray<readonly [string, Json]> = [
    ['foo', 'bar'],
    ['n', 1],
    ['size', '1024x1024'],
    ['width', 1024],
    ['Prompt', PROMPT],
  ];
  for (const [key, value] of strangers) {
    cases.push({ name: `unknown field ${key} -> unsupported_parameter ${key}`, body: withField(row, key, value), outcome: unsupportedParam(key) });
  }
  return cases;
}

function arrayCases(row: VideoModelRow): Case[] {
  const cases: Case[] = [];
  for (const param of ['images', 'videos', 'audios'] as const) {
    if (!accepts(row, param)) continue;
    const max = row.arrayMax[param];
    const min = row.arrayMin?.[param] ?? 0;
    if (max === undefined) throw new Error(`table: ${row.id} accepts ${param} without a max`);
    cases.push({ name: `${param} with max ${max} items -> 200`, body: withField(row, param, arrayItems(param, max)), outcome: OK });
    cases.push({
      name: `${param} with ${max + 1} items -> unsupported_value ${param}`,
      body: withField(row, param, arrayItems(param, max + 1)),
      outcome: unsupportedValue(param),
    });
    let emptyOutcome: Outcome = OK;
    if (min > 0) emptyOutcome = unsupportedValue(param);
    else if (row.atLeastOneOf !== undefined && param === 'images') emptyOutcome = missing('images');
    cases.push({
      name: `${param} [] -> ${emptyOutcome.ok ? '200' : `${emptyOutcome.code} ${emptyOutcome.param}`}`,
      body: withField(row, param, []),
      outcome: emptyOutcome,
    });
    const dataItem = param === 'images' ? PNG_400 : param === 'videos' ? VIDEO_DATA_URL : AUDIO_DATA_URL;
    cases.push({ name: `${param} [data URL] -> 200`, body: withField(row, param, [dataItem]), outcome: OK });
    const badItems: ReadonlyArray<readonly [string, Json]> = [
      ['[42]', [42]],
      ['[null]', [null]],
      ['["not-a-url"]', ['not-a-url']],
      ['[http:// URL]', ['http://example.com/a.png']],
      ['[ftp:// URL]', ['ftp://example.com/a.png']],
      ['[broken Base64 data URL]', [BROKEN_BASE64]],
      ['[valid, 42]', [arrayItems(param, 1)[0] ?? '', 42]],
      ['a string instead of an array', 'https://example.com/a.png'],
      ['null', null],
      ['an object', { url: 'https://example.com/a.png' }],
    ];
    for (const [label, value] of badItems) {
      cases.push({ name: `${param} ${label} -> invalid_parameter ${param}`, body: withField(row, param, value), outcome: invalid(param) });
    }
  }
  return cases;
}

function mediaCases(row: VideoModelRow): Case[] {
  const cases: Case[] = [];
  for (const param of ['image', 'end_image', 'audio'] as const satisfies readonly MediaParam[]) {
    if (!accepts(row, param)) continue;
    const httpsUrl = param === 'audio' ? AUDIO_URL : IMAGE_URL;
    const dataValue = param === 'audio' ? AUDIO_DATA_URL : PNG_400;
    cases.push({ name: `${param} https:// URL -> 200`, body: withField(row, param, httpsUrl), outcome: OK });
    cases.push({ name: `${param} Base64 data URL -> 200`, body: withField(row, param, dataValue), outcome: OK });
    const bad: ReadonlyArray<readonly [string, Json]> = [
      ['http:// URL', 'http://example.com/a.png'],
      ['ftp:// URL', 'ftp://example.com/a.png'],
      ['not a URL', 'not-a-url'],
      ['empty string', ''],
      ['broken Base64 data URL', BROKEN_BASE64],
      ['number', 42],
      ['null', null],
      ['array', [httpsUrl]],
    ];
    for (const [label, value] of bad) {
      cases.push({ name: `${param} ${label} -> invalid_parameter ${param}`, body: withField(row, param, value), outcome: invalid(param) });
    }
  }
  return cases;
}

function scalarTypeCases(row: VideoModelRow): Case[] {
  const cases: Case[] = [];
  for (const value of [42, null, true, [PROMPT], { text: PROMPT }] as Json[]) {
    cases.push({ name: `prompt ${show(value)} -> invalid_parameter prompt`, body: withField(row, 'prompt', value), outcome: invalid('prompt') });
  }
  for (const param of ['audio_enable', 'prompt_extend'] as const) {
    if (!accepts(row, param)) continue;
    cases.push({ name: `${param} false -> 200`, body: withField(row, param, false), outcome: OK });
    for (const value of [1, 0, 'true', null] as Json[]) {
      cases.push({ name: `${param} ${show(value)} -> invalid_parameter ${param}`, body: withField(row, param, value), outcome: invalid(param) });
    }
  }
  if (accepts(row, 'negative_prompt')) {
    for (const value of [42, null, ['x']] as Json[]) {
      cases.push({
        name: `negative_prompt ${show(value)} -> invalid_parameter negative_prompt`,
        body: withField(row, 'negative_prompt', value),
        outcome: invalid('negative_prompt'),
      });
    }
  }
  if (accepts(row, 'extra')) {
    for (const value of ['x', null, [], 42] as Json[]) {
      cases.push({ name: `extra ${show(value)} -> invalid_parameter extra`, body: withField(row, 'extra', value), outcome: invalid('extra') });
    }
  }
  return cases;
}

async function runCase(c: Case): Promise<void> {
  const res = await api.createVideo(c.body);
  if (c.outcome.ok) {
    expectQueuedVideoTask(res, typeof c.body['model'] === 'string' ? c.body['model'] : '');
  } else {
    expectVideoError(res, 400, c.outcome.code, c.outcome.param);
  }
}

// ---------------------------------------------------------------------------------------------
// The specification
// ---------------------------------------------------------------------------------------------

describe('the transcribed table itself', () => {
  it('lists 21 distinct video models', () => {
    expect(new Set(VIDEO_MODELS.map((m) => m.id)).size).toBe(21);
  });
  it.each(VIDEO_MODELS.map((row) => ({ id: row.id, row })))('$id: aspect_ratio spec agrees with the accepted parameters', ({ row }) => {
    expect(row.aspectRatio !== 'not-accepted').toBe(accepts(row, 'aspect_ratio'));
  });
});

describe.each(VIDEO_MODELS.map((row) => ({ id: row.id, row })))('video model $id', ({ row }) => {
  describe('creation of a minimal valid request', () => {
    it('returns 200 with a queued video task echoing the model', async () => {
      const res = await api.createVideo(minimalBody(row));
      expectQueuedVideoTask(res, row.id);
    });

    it('the created task can be read back by GET /v1/video/generations/{id}', async () => {
      const id = expectQueuedVideoTask(await api.createVideo(minimalBody(row)), row.id);
      const res = await api.getVideo(id);
      expect(res.status, res.text).toBe(200);
      expect(res.json).toMatchObject({ id, object: 'video.generation', model: row.id });
      expect(['queued', 'processing', 'completed', 'failed', 'cancelled']).toContain(field(res.json, 'status'));
    });
  });

  describe('required parameters', () => {
    it.each(requiredCases(row))('$name', runCase);
  });
  describe('accepted optional parameters', () => {
    it.each(optionalAcceptedCases(row))('$name', runCase);
  });
  describe('duration', () => {
    it.each(durationCases(row))('$name', runCase);
  });
  describe('resolution', () => {
    it.each(resolutionCases(row))('$name', runCase);
  });
  describe('aspect_ratio', () => {
    it.each(aspectRatioCases(row))('$name', runCase);
  });
  describe('seed', () => {
    it.each(seedCases(row))('$name', runCase);
  });
  describe('parameters the row does not accept', () => {
    it.each(unsupportedParameterCases(row))('$name', runCase);
  });
  const arrays = arrayCases(row);
  if (arrays.length > 0) {
    describe('reference arrays', () => {
      it.each(arrays)('$name', runCase);
    });
  }
  const media = mediaCases(row);
  if (media.length > 0) {
    describe('single media strings', () => {
      it.each(media)('$name', runCase);
    });
  }
  describe('JSON types of scalar parameters', () => {
    it.each(scalarTypeCases(row))('$name', runCase);
  });
});

describe('model field', () => {
  const base = { prompt: PROMPT };
  const cases: Case[] = [
    { name: 'unknown model id -> unsupported_value model', body: { ...base, model: 'vendora/famw-9.9-t2v' }, outcome: unsupportedValue('model') },
    { name: 'model id in the wrong case -> unsupported_value model', body: { ...base, model: 'Vendora/famw-2.7-t2v' }, outcome: unsupportedValue('model') },
    { name: 'model id with trailing space -> unsupported_value model', body: { ...base, model: 'vendora/famw-2.7-t2v ' }, outcome: unsupportedValue('model') },
    ...IMAGE_MODEL_IDS.map((id) => ({
      name: `image model ${id} on the video endpoint -> unsupported_value model`,
      body: { ...base, model: id },
      outcome: unsupportedValue('model'),
    })),
    { name: 'model 42 -> invalid_parameter model', body: { ...base, model: 42 }, outcome: invalid('model') },
    { name: 'model null -> invalid_parameter model', body: { ...base, model: null }, outcome: invalid('model') },
    { name: 'model ["vendora/famw-2.7-t2v"] -> invalid_parameter model', body: { ...base, model: ['vendora/famw-2.7-t2v'] }, outcome: invalid('model') },
    { name: 'empty body {} -> missing_parameter model', body: {}, outcome: missing('model') },
  ];
  it.each(cases)('$name', runCase);
});

describe('model-specific rule 1: vendorb/famsd-2.0-mini-ref2v-spicy needs a reference', () => {
  const model = 'vendorb/famsd-2.0-mini-ref2v-spicy';
  const cases: Case[] = [
    { name: 'no images, videos or audios -> missing_parameter images', body: { model, prompt: PROMPT }, outcome: missing('images') },
    {
      name: 'all three present but empty -> missing_parameter images',
      body: { model, prompt: PROMPT, images: [], videos: [], audios: [] },
      outcome: missing('images'),
    },
    { name: 'only videos [] -> missing_parameter images', body: { model, prompt: PROMPT, videos: [] }, outcome: missing('images') },
    { name: 'one image -> 200', body: { model, prompt: PROMPT, images: [PNG_400] }, outcome: OK },
    { name: 'one video, images [] -> 200', body: { model, prompt: PROMPT, images: [], videos: [VIDEO_URL] }, outcome: OK },
    { name: 'one audio -> 200', body: { model, prompt: PROMPT, audios: [AUDIO_URL] }, outcome: OK },
    { name: 'unknown field and no reference -> unsupported_parameter foo', body: { model, prompt: PROMPT, foo: 1 }, outcome: unsupportedParam('foo') },
  ];
  it.each(cases)('$name', runCase);
});

describe('model-specific rule 2: vendord/v6/reference-to-video images and extra.image_options', () => {
  const model = 'vendord/v6/reference-to-video';
  const images2: Json[] = [PNG_400, IMAGE_URL];
  const withOptions = (imageOptions: Json, images: Json[] = images2): JsonObject => ({
    model,
    prompt: '@image1 walks past @image2',
    images,
    extra: { image_options: imageOptions },
  });
  const cases: Case[] = [
    { name: 'images absent -> missing_parameter images', body: { model, prompt: PROMPT }, outcome: missing('images') },
    { name: 'images [] -> unsupported_value images', body: { model, prompt: PROMPT, images: [] }, outcome: unsupportedValue('images') },
    { name: '1 image -> 200', body: { model, prompt: PROMPT, images: [PNG_400] }, outcome: OK },
    { name: '7 images -> 200', body: { model, prompt: PROMPT, images: arrayItems('images', 7) }, outcome: OK },
    { name: '8 images -> unsupported_value images', body: { model, prompt: PROMPT, images: arrayItems('images', 8) }, outcome: unsupportedValue('images') },
    { name: 'extra {} -> 200', body: { model, prompt: PROMPT, images: images2, extra: {} }, outcome: OK },
    { name: 'image_options [] -> 200', body: withOptions([]), outcome: OK },
    { name: 'type subject and background -> 200', body: withOptions([{ type: 'subject' }, { type: 'background' }]), outcome: OK },
    { name: 'type and ref_name on the first image only -> 200', body: withOptions([{ type: 'subject', ref_name: 'hero' }]), outcome: OK },
    { name: 'empty option objects -> 200', body: withOptions([{}, {}]), outcome: OK },
    { name: 'ref_name of exactly 30 ASCII bytes -> 200', body: withOptions([{ ref_name: 'a'.repeat(30) }]), outcome: OK },
    { name: 'ref_name of 10 x "€" = 30 UTF-8 bytes -> 200', body: withOptions([{ ref_name: '€'.repeat(10) }]), outcome: OK },
    { name: 'ref_name of 31 ASCII bytes -> unsupported_value extra', body: withOptions([{ ref_name: 'a'.repeat(31) }]), outcome: unsupportedValue('extra') },
    {
      name: 'ref_name of 11 x "€" = 33 UTF-8 bytes (11 chars) -> unsupported_value extra',
      body: withOptions([{ ref_name: '€'.repeat(11) }]),
      outcome: unsupportedValue('extra'),
    },
    {
      name: 'ref_name of 8 x "😀" = 32 UTF-8 bytes (16 UTF-16 units) -> unsupported_value extra',
      body: withOptions([{ ref_name: '😀'.repeat(8) }]),
      outcome: unsupportedValue('extra'),
    },
    {
      name: 'second option has a 31-byte ref_name -> unsupported_value extra',
      body: withOptions([{ ref_name: 'ok' }, { ref_name: 'b'.repeat(31) }]),
      outcome: unsupportedValue('extra'),
    },
    { name: 'type "foreground" (not in the enum) -> unsupported_value extra', body: withOptions([{ type: 'foreground' }]), outcome: unsupportedValue('extra') },
    { name: 'type "Subject" (wrong case) -> unsupported_value extra', body: withOptions([{ type: 'Subject' }]), outcome: unsupportedValue('extra') },
    { name: 'type 1 (not a string) -> invalid_parameter extra', body: withOptions([{ type: 1 }]), outcome: invalid('extra') },
    { name: 'ref_name 42 (not a string) -> invalid_parameter extra', body: withOptions([{ ref_name: 42 }]), outcome: invalid('extra') },
    { name: 'option item not an object -> invalid_parameter extra', body: withOptions(['subject']), outcome: invalid('extra') },
    { name: 'image_options not an array -> invalid_parameter extra', body: withOptions({ type: 'subject' }), outcome: invalid('extra') },
    {
      name: 'image_options longer than images -> invalid_parameter extra',
      body: withOptions([{ type: 'subject' }, { type: 'background' }, { type: 'subject' }]),
      outcome: invalid('extra'),
    },
    { name: 'image_options of 2 with 1 image -> invalid_parameter extra', body: withOptions([{}, {}], [PNG_400]), outcome: invalid('extra') },
  ];
  it.each(cases)('$name', runCase);
});

describe('vendorc-h3-enhanced-reference-to-video requires aspect_ratio', () => {
  const model = 'vendorc-h3-enhanced-reference-to-video';
  const cases: Case[] = [
    { name: 'aspect_ratio absent -> missing_parameter aspect_ratio', body: { model, prompt: PROMPT }, outcome: missing('aspect_ratio') },
    {
      name: 'aspect_ratio absent with images -> missing_parameter aspect_ratio',
      body: { model, prompt: PROMPT, images: [PNG_400] },
      outcome: missing('aspect_ratio'),
    },
    { name: 'aspect_ratio 21:9 -> 200', body: { model, prompt: PROMPT, aspect_ratio: '21:9' }, outcome: OK },
    {
      name: 'aspect_ratio adaptive -> unsupported_value aspect_ratio',
      body: { model, prompt: PROMPT, aspect_ratio: 'adaptive' },
      outcome: unsupportedValue('aspect_ratio'),
    },
    { name: 'resolution 2k -> 200', body: { model, prompt: PROMPT, aspect_ratio: '1:1', resolution: '2k' }, outcome: OK },
    {
      name: 'resolution 2K -> unsupported_value resolution',
      body: { model, prompt: PROMPT, aspect_ratio: '1:1', resolution: '2K' },
      outcome: unsupportedValue('resolution'),
    },
  ];
  it.each(cases)('$name', runCase);
});

describe('resolution matching is exact: 2K only on vendorc-h3-image-to-video', () => {
  const cases: Case[] = [
    {
      name: 'vendorc-h3-image-to-video 2K -> 200',
      body: { model: 'vendorc-h3-image-to-video', prompt: PROMPT, image: PNG_400, resolution: '2K' },
      outcome: OK,
    },
    {
      name: 'vendorc-h3-image-to-video 2k -> unsupported_value resolution',
      body: { model: 'vendorc-h3-image-to-video', prompt: PROMPT, image: PNG_400, resolution: '2k' },
      outcome: unsupportedValue('resolution'),
    },
    {
      name: 'vendorc-h3-image-to-video 4k -> unsupported_value resolution',
      body: { model: 'vendorc-h3-image-to-video', prompt: PROMPT, image: PNG_400, resolution: '4k' },
      outcome: unsupportedValue('resolution'),
    },
    {
      name: 'vendorc/vendorc-h3-i2v-spicy 2K -> unsupported_value resolution',
      body: { model: 'vendorc/vendorc-h3-i2v-spicy', prompt: PROMPT, image: PNG_400, resolution: '2K' },
      outcome: unsupportedValue('resolution'),
    },
    {
      name: 'vendorc/vendorc-h3-i2v-spicy 4K -> unsupported_value resolution',
      body: { model: 'vendorc/vendorc-h3-i2v-spicy', prompt: PROMPT, image: PNG_400, resolution: '4K' },
      outcome: unsupportedValue('resolution'),
    },
    {
      name: 'vendorb/famsd-2.0-i2v-spicy 4K -> unsupported_value resolution',
      body: { model: 'vendorb/famsd-2.0-i2v-spicy', prompt: PROMPT, image: PNG_400, resolution: '4K' },
      outcome: unsupportedValue('resolution'),
    },
    {
      name: 'vendora/famw-2.7-t2v 720P -> unsupported_value resolution',
      body: { model: 'vendora/famw-2.7-t2v', prompt: PROMPT, resolution: '720P' },
      outcome: unsupportedValue('resolution'),
    },
  ];
  it.each(cases)('$name', runCase);
});

describe('model-specific rule 3: vendord/v6/image-to-video input image (data URL, checked at creation)', () => {
  const model = 'vendord/v6/image-to-video';
  const shapes: ReadonlyArray<readonly [string, number, number, 'png' | 'jpeg' | 'gif' | 'webp', boolean]> = [
    ['PNG 400x400', 400, 400, 'png', true],
    ['JPEG 400x400', 400, 400, 'jpeg', true],
    ['PNG 300x300 (minimum)', 300, 300, 'png', true],
    ['PNG 1000x400 (ratio 2.5, maximum)', 1000, 400, 'png', true],
    ['PNG 400x1000 (ratio 0.4, minimum)', 400, 1000, 'png', true],
    ['PNG 299x400 (width below 300)', 299, 400, 'png', false],
    ['PNG 400x299 (height below 300)', 400, 299, 'png', false],
    ['JPEG 299x299', 299, 299, 'jpeg', false],
    ['PNG 1000x300 (ratio 3.33)', 1000, 300, 'png', false],
    ['PNG 1003x400 (ratio 2.5075)', 1003, 400, 'png', false],
    ['PNG 300x800 (ratio 0.375)', 300, 800, 'png', false],
    ['GIF 400x400', 400, 400, 'gif', false],
    ['WebP 400x400', 400, 400, 'webp', false],
  ];
  it.each(shapes.map(([label, width, height, format, ok]) => ({ name: `${label} -> ${ok ? '200' : 'unsupported_value image'}`, width, height, format, ok })))(
    '$name',
    async ({ width, height, format, ok }) => {
      const body = { model, prompt: PROMPT, image: await imageDataUrl(width, height, format) };
      await runCase({ name: '', body, outcome: ok ? OK : unsupportedValue('image') });
    },
  );

  it('image omitted -> 200', async () => {
    await runCase({ name: '', body: { model, prompt: PROMPT }, outcome: OK });
  });

  it('a data URL that decodes but is not an image -> unsupported_value image', async () => {
    await runCase({ name: '', body: { model, prompt: PROMPT, image: 'data:image/png;base64,aGVsbG8gd29ybGQ=' }, outcome: unsupportedValue('image') });
  });

  it('a PNG of more than 10 MB -> unsupported_value image', async () => {
    const png = await largePngBuffer(2100, 1800); // ~11.3 MB, uncompressed
    expect(png.length).toBeGreaterThan(10.5 * 1024 * 1024);
    await runCase({ name: '', body: { model, prompt: PROMPT, image: dataUrl(png, 'image/png') }, outcome: unsupportedValue('image') });
  });

  it('an https:// URL is accepted at creation (rule 3 is checked when the task runs)', async () => {
    await runCase({ name: '', body: { model, prompt: PROMPT, image: IMAGE_URL }, outcome: OK });
  });

  it('end_image -> unsupported_parameter end_image (last-frame control not supported)', async () => {
    await runCase({ name: '', body: { model, prompt: PROMPT, image: JPEG_400, end_image: JPEG_400 }, outcome: unsupportedParam('end_image') });
  });
});

describe('seed rule 5 / decisions §2: unknown fields are rejected on every model', () => {
  it.each(
    VIDEO_MODELS.map((row) => ({ name: `${row.id}: foo -> unsupported_parameter foo`, body: withField(row, 'foo', 'bar'), outcome: unsupportedParam('foo') })),
  )('$name', runCase);
});

describe('error precedence: body shape, model, unsupported parameters, missing required, types, values', () => {
  const i2v = 'vendora/famw-2.7-i2v';
  const t2v = 'vendora/famw-2.7-t2v';
  const cases: Case[] = [
    {
      name: 'unknown model + unknown field -> unsupported_value model',
      body: { model: 'nope/nope', prompt: PROMPT, foo: 1 },
      outcome: unsupportedValue('model'),
    },
    { name: 'unknown model + missing prompt -> unsupported_value model', body: { model: 'nope/nope' }, outcome: unsupportedValue('model') },
    { name: 'missing model + unknown field -> missing_parameter model', body: { prompt: PROMPT, foo: 1 }, outcome: missing('model') },
    { name: 'model of wrong type + unknown field -> invalid_parameter model', body: { model: 7, prompt: PROMPT, foo: 1 }, outcome: invalid('model') },
    {
      name: 'unknown field + missing required image -> unsupported_parameter foo',
      body: { model: i2v, prompt: PROMPT, foo: 1 },
      outcome: unsupportedParam('foo'),
    },
    { name: 'unknown field + missing prompt -> unsupported_parameter foo', body: { model: t2v, foo: 1 }, outcome: unsupportedParam('foo') },
    {
      name: 'aspect_ratio on a not-configurable model + missing image -> unsupported_parameter aspect_ratio',
      body: { model: i2v, prompt: PROMPT, aspect_ratio: '16:9' },
      outcome: unsupportedParam('aspect_ratio'),
    },
    {
      name: 'end_image null on t2v (not accepted) -> unsupported_parameter end_image',
      body: { model: t2v, prompt: PROMPT, end_image: null },
      outcome: unsupportedParam('end_image'),
    },
    {
      name: 'unsupported parameter + wrong-typed duration -> unsupported_parameter end_image',
      body: { model: t2v, prompt: PROMPT, end_image: PNG_400, duration: '5' },
      outcome: unsupportedParam('end_image'),
    },
    { name: 'missing image + wrong-typed duration -> missing_parameter image', body: { model: i2v, prompt: PROMPT, duration: '5' }, outcome: missing('image') },
    { name: 'missing prompt + out-of-range duration -> missing_parameter prompt', body: { model: t2v, duration: 99 }, outcome: missing('prompt') },
    {
      name: 'missing image + malformed media elsewhere -> missing_parameter image',
      body: { model: i2v, prompt: PROMPT, end_image: 'http://example.com/x.png' },
      outcome: missing('image'),
    },
    {
      name: 'wrong-typed duration + unlisted resolution -> invalid_parameter duration',
      body: { model: t2v, prompt: PROMPT, duration: '5', resolution: '999p' },
      outcome: invalid('duration'),
    },
    {
      name: 'non-integer seed + out-of-range duration -> invalid_parameter seed',
      body: { model: t2v, prompt: PROMPT, seed: 1.5, duration: 99 },
      outcome: invalid('seed'),
    },
    { name: 'empty prompt + out-of-range duration -> invalid_parameter prompt', body: { model: t2v, prompt: ' ', duration: 99 }, outcome: invalid('prompt') },
    {
      name: 'http:// image + unlisted resolution -> invalid_parameter image',
      body: { model: i2v, prompt: PROMPT, image: 'http://example.com/a.png', resolution: '999p' },
      outcome: invalid('image'),
    },
    {
      name: 'too many images + malformed image item -> invalid_parameter images',
      body: { model: 'vendord/v6/reference-to-video', prompt: PROMPT, images: [...arrayItems('images', 8), 'not-a-url'] },
      outcome: invalid('images'),
    },
  ];
  it.each(cases)('$name', runCase);
});

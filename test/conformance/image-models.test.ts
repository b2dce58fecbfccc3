/**
 * Conformance: `POST /v1/images/generations/async` validation and the status envelope, for both
 * image models, transcribed from the seed's image model table and decisions §1,
 * decisions §2 and decisions §4.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { Api, expectImageCreated, expectImageError, expectSecondsNearNow, field, isRecord, type Json, type JsonObject } from './support.js';

interface ImageModelRow {
  readonly id: string;
  /** Per-side bounds of size / width / height. */
  readonly minSide: number;
  readonly maxSide: number;
  readonly defaultWidth: number;
  readonly defaultHeight: number;
  readonly seedMin: number;
  /** `null` = no upper bound shown. */
  readonly seedMax: number | null;
  readonly seedNullable: boolean;
  readonly promptExtendNullable: boolean;
}

const IMAGE_MODELS: readonly ImageModelRow[] = [
  {
    id: 'vendora/famz-image-spicy',
    minSide: 256,
    maxSide: 1536,
    defaultWidth: 1024,
    defaultHeight: 1536,
    seedMin: 0,
    seedMax: null,
    seedNullable: false,
    promptExtendNullable: false,
  },
  {
    id: 'vendora/famz-image-spicy-pro',
    minSide: 256,
    maxSide: 2560,
    defaultWidth: 1024,
    defaultHeight: 1024,
    seedMin: 0,
    seedMax: 2147483647,
    seedNullable: true,
    promptExtendNullable: true,
  },
];

const PROMPT = 'a lighthouse on a cliff at dusk, oil painting';

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

type Outcome = { readonly ok: true } | { readonly ok: false; readonly code: string };
interface Case {
  readonly name: string;
  readonly body: JsonObject;
  readonly outcome: Outcome;
}

const OK: Outcome = { ok: true };
const fail = (code: string): Outcome => ({ ok: false, code });

async function runCase(c: Case): Promise<void> {
  const res = await api.createImage(c.body);
  if (c.outcome.ok) expectImageCreated(res);
  else expectImageError(res, 400, c.outcome.code);
}

function show(value: Json): string {
  return JSON.stringify(value);
}

function casesFor(row: ImageModelRow): Case[] {
  const base = (extra: JsonObject = {}): JsonObject => ({ model: row.id, prompt: PROMPT, ...extra });
  const { minSide: lo, maxSide: hi } = row;
  const cases: Case[] = [
    // required
    { name: 'model absent -> missing_parameter', body: { prompt: PROMPT }, outcome: fail('missing_parameter') },
    { name: 'prompt absent -> missing_parameter', body: { model: row.id }, outcome: fail('missing_parameter') },
    { name: 'prompt "" -> invalid_parameter', body: base({ prompt: '' }), outcome: fail('invalid_parameter') },
    { name: 'prompt whitespace only -> invalid_parameter', body: base({ prompt: ' \n\t ' }), outcome: fail('invalid_parameter') },
    { name: 'prompt 42 -> invalid_parameter', body: base({ prompt: 42 }), outcome: fail('invalid_parameter') },
    { name: 'prompt null -> invalid_parameter', body: base({ prompt: null }), outcome: fail('invalid_parameter') },
    // size
    { name: `size ${lo}x${lo} (minimum) -> 200`, body: base({ size: `${lo}x${lo}` }), outcome: OK },
    { name: `size ${hi}x${hi} (maximum) -> 200`, body: base({ size: `${hi}x${hi}` }), outcome: OK },
    { name: `size ${lo}x${hi} -> 200`, body: base({ size: `${lo}x${hi}` }), outcome: OK },
    { name: 'size 1024x1024 -> 200', body: base({ size: '1024x1024' }), outcome: OK },
    { name: `size ${lo - 1}x1024 -> unsupported_value`, body: base({ size: `${lo - 1}x1024` }), outcome: fail('unsupported_value') },
    { name: `size 1024x${lo - 1} -> unsupported_value`, body: base({ size: `1024x${lo - 1}` }), outcome: fail('unsupported_value') },
    { name: `size ${hi + 1}x1024 -> unsupported_value`, body: base({ size: `${hi + 1}x1024` }), outcome: fail('unsupported_value') },
    { name: `size 1024x${hi + 1} -> unsupported_value`, body: base({ size: `1024x${hi + 1}` }), outcome: fail('unsupported_value') },
    { name: 'size 0x0 -> unsupported_value', body: base({ size: '0x0' }), outcome: fail('unsupported_value') },
    ...['1024*1024', '1024x', 'x1024', 'abc', '', '1024', '1024x1024x1', '1024.5x1024', '1024 x 1024'].map((size) => ({
      name: `size ${show(size)} (malformed) -> invalid_parameter`,
      body: base({ size }),
      outcome: fail('invalid_parameter'),
    })),
    { name: 'size 1024 (number) -> invalid_parameter', body: base({ size: 1024 }), outcome: fail('invalid_parameter') },
    { name: 'size null -> invalid_parameter', body: base({ size: null }), outcome: fail('invalid_parameter') },
    { name: 'size with width -> invalid_parameter', body: base({ size: '512x512', width: 512 }), outcome: fail('invalid_parameter') },
    { name: 'size with height -> invalid_parameter', body: base({ size: '512x512', height: 512 }), outcome: fail('invalid_parameter') },
    { name: 'size with width and height -> invalid_parameter', body: base({ size: '512x512', width: 512, height: 512 }), outcome: fail('invalid_parameter') },
    // width / height
    { name: `width ${lo} -> 200`, body: base({ width: lo }), outcome: OK },
    { name: `width ${hi} -> 200`, body: base({ width: hi }), outcome: OK },
    { name: `height ${lo} -> 200`, body: base({ height: lo }), outcome: OK },
    { name: `height ${hi} -> 200`, body: base({ height: hi }), outcome: OK },
    { name: `width ${lo} and height ${hi} -> 200`, body: base({ width: lo, height: hi }), outcome: OK },
    { name: `width ${lo - 1} -> unsupported_value`, body: base({ width: lo - 1 }), outcome: fail('unsupported_value') },
    { name: `width ${hi + 1} -> unsupported_value`, body: base({ width: hi + 1 }), outcome: fail('unsupported_value') },
    { name: `height ${lo - 1} -> unsupported_value`, body: base({ height: lo - 1 }), outcome: fail('unsupported_value') },
    { name: `height ${hi + 1} -> unsupported_value`, body: base({ height: hi + 1 }), outcome: fail('unsupported_value') },
    { name: 'width 0 -> unsupported_value', body: base({ width: 0 }), outcome: fail('unsupported_value') },
    ...(['512', 512.5, null, true] as Json[]).flatMap((value) => [
      { name: `width ${show(value)} -> invalid_parameter`, body: base({ width: value }), outcome: fail('invalid_parameter') },
      { name: `height ${show(value)} -> invalid_parameter`, body: base({ height: value }), outcome: fail('invalid_parameter') },
    ]),
    // seed
    { name: 'seed 0 (random) -> 200', body: base({ seed: 0 }), outcome: OK },
    { name: 'seed 1 -> 200', body: base({ seed: 1 }), outcome: OK },
    { name: 'seed -1 -> unsupported_value', body: base({ seed: -1 }), outcome: fail('unsupported_value') },
    ...(row.seedMax === null
      ? [{ name: 'seed 4294967297 (no upper bound) -> 200', body: base({ seed: 4294967297 }), outcome: OK }]
      : [
          { name: `seed ${row.seedMax} (maximum) -> 200`, body: base({ seed: row.seedMax }), outcome: OK },
          { name: `seed ${row.seedMax + 1} -> unsupported_value`, body: base({ seed: row.seedMax + 1 }), outcome: fail('unsupported_value') },
        ]),
    row.seedNullable
      ? { name: 'seed null (nullable: random) -> 200', body: base({ seed: null }), outcome: OK }
      : { name: 'seed null (not nullable) -> invalid_parameter', body: base({ seed: null }), outcome: fail('invalid_parameter') },
    { name: 'seed "5" -> invalid_parameter', body: base({ seed: '5' }), outcome: fail('invalid_parameter') },
    { name: 'seed 1.5 -> invalid_parameter', body: base({ seed: 1.5 }), outcome: fail('invalid_parameter') },
    // prompt_extend
    { name: 'prompt_extend true -> 200', body: base({ prompt_extend: true }), outcome: OK },
    { name: 'prompt_extend false -> 200', body: base({ prompt_extend: false }), outcome: OK },
    row.promptExtendNullable
      ? { name: 'prompt_extend null (nullable: provider default) -> 200', body: base({ prompt_extend: null }), outcome: OK }
      : { name: 'prompt_extend null (not nullable) -> invalid_parameter', body: base({ prompt_extend: null }), outcome: fail('invalid_parameter') },
    { name: 'prompt_extend "true" -> invalid_parameter', body: base({ prompt_extend: 'true' }), outcome: fail('invalid_parameter') },
    { name: 'prompt_extend 1 -> invalid_parameter', body: base({ prompt_extend: 1 }), outcome: fail('invalid_parameter') },
    // output_format
    { name: 'output_format png -> 200', body: base({ output_format: 'png' }), outcome: OK },
    { name: 'output_format jpeg -> unsupported_value', body: base({ output_format: 'jpeg' }), outcome: fail('unsupported_value') },
    { name: 'output_format PNG (wrong case) -> unsupported_value', body: base({ output_format: 'PNG' }), outcome: fail('unsupported_value') },
    { name: 'output_format null -> invalid_parameter', body: base({ output_format: null }), outcome: fail('invalid_parameter') },
    { name: 'output_format 1 -> invalid_parameter', body: base({ output_format: 1 }), outcome: fail('invalid_parameter') },
    // n
    { name: 'n 1 -> 200', body: base({ n: 1 }), outcome: OK },
    { name: 'n 2 -> unsupported_value', body: base({ n: 2 }), outcome: fail('unsupported_value') },
    { name: 'n 0 -> unsupported_value', body: base({ n: 0 }), outcome: fail('unsupported_value') },
    { name: 'n "1" -> invalid_parameter', body: base({ n: '1' }), outcome: fail('invalid_parameter') },
    { name: 'n 1.5 -> invalid_parameter', body: base({ n: 1.5 }), outcome: fail('invalid_parameter') },
    { name: 'n null -> invalid_parameter', body: base({ n: null }), outcome: fail('invalid_parameter') },
    // every parameter of the table at once
    {
      name: 'all table parameters together -> 200',
      body: base({ width: 512, height: 768, seed: 7, prompt_extend: false, output_format: 'png', n: 1 }),
      outcome: OK,
    },
    // parameters not in the table
    ...(
      [
        ['foo', 'bar'],
        ['duration', 5],
        ['resolution', '720p'],
        ['aspect_ratio', '1:1'],
        ['image', 'https://example.com/a.png'],
        ['negative_prompt', 'blurry'],
        ['response_format', 'url'],
      ] as ReadonlyArray<readonly [string, Json]>
    ).map(([key, value]) => ({
      name: `${key} (not an image parameter) -> unsupported_parameter`,
      body: base({ [key]: value }),
      outcome: fail('unsupported_parameter'),
    })),
  ];
  return cases;
}

describe.each(IMAGE_MODELS.map((row) => ({ id: row.id, row })))('image model $id', ({ row }) => {
  it('minimal valid request -> 200 {code:"success", message:"", data:{task_id}}', async () => {
    expectImageCreated(await api.createImage({ model: row.id, prompt: PROMPT }));
  });

  it.each(casesFor(row))('$name', runCase);

  it('status envelope: {code:"success", message:"", data:{task_id, status, progress, outputs, submit_time, start_time, finish_time, fail_reason}}', async () => {
    const id = expectImageCreated(await api.createImage({ model: row.id, prompt: PROMPT }));
    const res = await api.getImage(id);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ code: 'success', message: '' });
    const data = field(res.json, 'data');
    expect(isRecord(data)).toBe(true);
    expect(Object.keys(isRecord(data) ? data : {}).sort()).toEqual(
      expect.arrayContaining(['fail_reason', 'finish_time', 'outputs', 'progress', 'start_time', 'status', 'submit_time', 'task_id']),
    );
    expect(field(data, 'task_id')).toBe(id);
    expect(['QUEUED', 'IN_PROGRESS', 'SUCCESS', 'FAILURE']).toContain(field(data, 'status'));
    expect(field(data, 'progress')).toMatch(/^(100|[1-9]?[0-9])%$/);
    expect(Array.isArray(field(data, 'outputs'))).toBe(true);
    for (const url of field(data, 'outputs') as unknown[]) expect(typeof url).toBe('string');
    expectSecondsNearNow(field(data, 'submit_time'));
    expect(Number.isInteger(field(data, 'start_time'))).toBe(true);
    expect(Number.isInteger(field(data, 'finish_time'))).toBe(true);
    expect(typeof field(data, 'fail_reason')).toBe('string');
    if (field(data, 'status') === 'QUEUED') {
      expect(field(data, 'start_time')).toBe(0);
      expect(field(data, 'finish_time')).toBe(0);
      expect(field(data, 'fail_reason')).toBe('');
    }
  });
});

describe('image endpoint: model field', () => {
  const cases: Case[] = [
    { name: 'unknown model -> unsupported_value', body: { model: 'vendora/famz-image-nope', prompt: PROMPT }, outcome: fail('unsupported_value') },
    { name: 'model in the wrong case -> unsupported_value', body: { model: 'vendora/FAMZ-image-spicy', prompt: PROMPT }, outcome: fail('unsupported_value') },
    {
      name: 'video model vendora/famw-2.7-t2v -> unsupported_value',
      body: { model: 'vendora/famw-2.7-t2v', prompt: PROMPT },
      outcome: fail('unsupported_value'),
    },
    {
      name: 'video model vendord/v6/image-to-video -> unsupported_value',
      body: { model: 'vendord/v6/image-to-video', prompt: PROMPT },
      outcome: fail('unsupported_value'),
    },
    { name: 'model 42 -> invalid_parameter', body: { model: 42, prompt: PROMPT }, outcome: fail('invalid_parameter') },
    { name: 'model null -> invalid_parameter', body: { model: null, prompt: PROMPT }, outcome: fail('invalid_parameter') },
    { name: 'empty body {} -> missing_parameter', body: {}, outcome: fail('missing_parameter') },
  ];
  it.each(cases)('$name', runCase);
});

describe('image endpoint: error precedence (body shape, model, unsupported parameters, missing, types, values)', () => {
  const model = 'vendora/famz-image-spicy';
  const cases: Case[] = [
    { name: 'unknown model + unknown field -> unsupported_value', body: { model: 'x/y', prompt: PROMPT, foo: 1 }, outcome: fail('unsupported_value') },
    { name: 'missing model + unknown field -> missing_parameter', body: { prompt: PROMPT, foo: 1 }, outcome: fail('missing_parameter') },
    { name: 'unknown field + missing prompt -> unsupported_parameter', body: { model, foo: 1 }, outcome: fail('unsupported_parameter') },
    { name: 'missing prompt + wrong-typed seed -> missing_parameter', body: { model, seed: '5' }, outcome: fail('missing_parameter') },
    { name: 'malformed size + n 2 -> invalid_parameter', body: { model, prompt: PROMPT, size: '1024*1024', n: 2 }, outcome: fail('invalid_parameter') },
    {
      name: 'wrong-typed width + out-of-range height -> invalid_parameter',
      body: { model, prompt: PROMPT, width: '512', height: 99999 },
      outcome: fail('invalid_parameter'),
    },
  ];
  it.each(cases)('$name', runCase);
});

describe('image endpoint: error bodies', () => {
  it('a validation error is HTTP 400 with exactly {code, message, data:null}', async () => {
    const res = await api.createImage({ model: 'vendora/famz-image-spicy', prompt: PROMPT, n: 2 });
    expectImageError(res, 400, 'unsupported_value');
    expect(Object.keys(isRecord(res.json) ? res.json : {}).sort()).toEqual(['code', 'data', 'message']);
    expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  });
});

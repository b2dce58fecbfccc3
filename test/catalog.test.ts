import { describe, expect, it } from 'vitest';
import { MODELS, createValidator, type ImageModelRow, type ModelRow, type VideoModelRow } from '../src/catalog/index.js';

/**
 * The validator against every catalog row: whatever a row says, the validator enforces. (The
 * rows themselves are checked against the seed by the HTTP conformance suite, transcribed
 * independently in test/conformance/.)
 */
const validator = createValidator(MODELS);
const VIDEO = MODELS.filter((row): row is VideoModelRow => row.kind === 'video');
const IMAGE = MODELS.filter((row): row is ImageModelRow => row.kind === 'image');
const PNG_URL = 'https://example.com/frame.png';
const COMMON = [
  'negative_prompt',
  'image',
  'end_image',
  'images',
  'videos',
  'audios',
  'audio',
  'audio_enable',
  'aspect_ratio',
  'prompt_extend',
  'extra',
] as const;

function minimal(row: VideoModelRow): Record<string, unknown> {
  const body: Record<string, unknown> = { model: row.id, prompt: 'a fox' };
  for (const name of row.required) {
    if (name === 'images') body[name] = [PNG_URL];
    else if (name === 'aspect_ratio') body[name] = row.aspectRatio?.values[0];
    else body[name] = PNG_URL;
  }
  if (row.atLeastOneOf) body['images'] = [PNG_URL];
  return body;
}

function check(row: ModelRow, body: Record<string, unknown>) {
  const result = validator.validate(row.kind, { body, bodyBytes: JSON.stringify(body).length });
  return result.ok ? { ok: true as const, params: result.params } : { ok: false as const, code: result.error.code, param: result.error.param };
}

describe.each(VIDEO.map((row) => [row.id, row] as const))('video row %s', (_id, row) => {
  const accepted = new Set<string>([...row.required, ...row.optional]);

  it('accepts the minimal request and stores the defaults', () => {
    const result = check(row, minimal(row));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.params['duration']).toBe(5);
    expect(result.params['resolution']).toBe(row.resolution?.default);
    if (accepted.has('aspect_ratio')) expect(result.params['aspect_ratio']).toBe(row.aspectRatio?.default ?? minimal(row)['aspect_ratio']);
    expect(result.params['audio_enable']).toBe(row.defaults?.audio_enable);
  });

  it.each(row.required.map((name) => [name]))('reports missing %s', (name) => {
    const body = minimal(row);
    delete body[name];
    expect(check(row, body)).toEqual({ ok: false, code: 'missing_parameter', param: name });
  });

  it.each(COMMON.filter((name) => !accepted.has(name)).map((name) => [name]))('refuses %s as unsupported_parameter', (name) => {
    expect(check(row, { ...minimal(row), [name]: PNG_URL })).toMatchObject({ code: 'unsupported_parameter', param: name });
  });

  if (row.duration) {
    const { min, max } = row.duration;
    it.each([[min], [max]])('accepts duration %i', (duration) => expect(check(row, { ...minimal(row), duration }).ok).toBe(true));
    it.each([[min - 1], [max + 1]])('refuses duration %i', (duration) =>
      expect(check(row, { ...minimal(row), duration })).toEqual({ ok: false, code: 'unsupported_value', param: 'duration' }),
    );
  }

  it.each((row.resolution?.values ?? ['anything-goes']).map((value) => [value]))('accepts resolution %s', (resolution) =>
    expect(check(row, { ...minimal(row), resolution }).ok).toBe(true),
  );

  if (accepted.has('aspect_ratio') && row.aspectRatio) {
    it.each(row.aspectRatio.values.map((value) => [value]))('accepts aspect_ratio %s', (aspect_ratio) =>
      expect(check(row, { ...minimal(row), aspect_ratio }).ok).toBe(true),
    );
  }

  for (const bound of ['min', 'max'] as const) {
    const limit = row.seed[bound];
    if (limit === undefined) continue;
    const outside = bound === 'min' ? limit - 1 : limit + 1;
    it(`accepts seed ${limit} and refuses ${outside}`, () => {
      expect(check(row, { ...minimal(row), seed: limit }).ok).toBe(true);
      expect(check(row, { ...minimal(row), seed: outside })).toEqual({ ok: false, code: 'unsupported_value', param: 'seed' });
    });
  }

  for (const [name, count] of Object.entries(row.items ?? {})) {
    it(`accepts ${count.max} ${name} and refuses ${count.max + 1}`, () => {
      expect(check(row, { ...minimal(row), [name]: Array.from({ length: count.max }, () => PNG_URL) }).ok).toBe(true);
      expect(check(row, { ...minimal(row), [name]: Array.from({ length: count.max + 1 }, () => PNG_URL) })).toEqual({
        ok: false,
        code: 'unsupported_value',
        param: name,
      });
    });
  }

  it.each([
    ['duration', '5'],
    ['duration', 5.5],
    ['duration', null],
    ['seed', 'x'],
    ['prompt', 42],
    ['prompt', '   '],
    ['resolution', 720],
  ])('refuses %s = %j as invalid_parameter', (name, value) => {
    expect(check(row, { ...minimal(row), [name]: value })).toEqual({ ok: false, code: 'invalid_parameter', param: name });
  });
});

describe.each(IMAGE.map((row) => [row.id, row] as const))('image row %s', (_id, row) => {
  const base = { model: row.id, prompt: 'a lighthouse' };

  it('resolves the default size', () => {
    expect(check(row, base)).toMatchObject({ ok: true, params: { width: row.defaults.width, height: row.defaults.height, n: 1, output_format: 'png' } });
  });

  it('takes the missing side from the default', () => {
    expect(check(row, { ...base, width: 512 })).toMatchObject({ ok: true, params: { width: 512, height: row.defaults.height } });
  });

  it.each([
    [`${row.side.min}x${row.side.max}`, true],
    [`${row.side.min - 1}x${row.side.max}`, false],
    [`${row.side.min}x${row.side.max + 1}`, false],
  ])('size %s accepted: %s', (size, ok) => {
    const result = check(row, { ...base, size });
    if (ok) expect(result).toMatchObject({ ok: true, params: { width: row.side.min, height: row.side.max } });
    else expect(result).toEqual({ ok: false, code: 'unsupported_value', param: 'size' });
  });

  it('refuses size together with width', () => {
    expect(check(row, { ...base, size: '512x512', width: 512 })).toEqual({ ok: false, code: 'invalid_parameter', param: 'size' });
  });

  it(`treats a null seed as ${row.seed.nullable ? 'random' : 'invalid'}`, () => {
    expect(check(row, { ...base, seed: null }).ok).toBe(row.seed.nullable);
  });
});

describe('model routing', () => {
  it.each([
    [{ prompt: 'x' }, 'missing_parameter'],
    [{ model: 7, prompt: 'x' }, 'invalid_parameter'],
    [{ model: 'nope', prompt: 'x' }, 'unsupported_value'],
    [{ model: 'vendora/famz-image-spicy', prompt: 'x' }, 'unsupported_value'],
  ])('%j on the video endpoint is %s for model', (body, code) => {
    const result = validator.validate('video', { body, bodyBytes: 10 });
    expect(result.ok ? undefined : [result.error.code, result.error.param]).toEqual([code, 'model']);
  });

  it.each([[[]], ['text'], [null], [3]])('refuses a body %j that is not an object', (body) => {
    const result = validator.validate('video', { body, bodyBytes: 10 });
    expect(result.ok ? undefined : [result.error.code, result.error.param]).toEqual(['invalid_parameter', 'body']);
  });
});

describe('precedence of faults', () => {
  const row = VIDEO.find((r) => r.id === 'vendora/famw-2.7-i2v') as VideoModelRow;
  it.each<[Record<string, unknown>, string, string]>([
    [{ foo: 1 }, 'unsupported_parameter', 'foo'],
    [{ image: undefined, duration: 'x' }, 'missing_parameter', 'image'],
    [{ duration: 'x', resolution: '9000p' }, 'invalid_parameter', 'duration'],
    [{ resolution: '9000p' }, 'unsupported_value', 'resolution'],
  ])('%j reports %s', (extra, code, param) => {
    const body: Record<string, unknown> = { ...minimal(row), ...extra };
    for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k];
    expect(check(row, body)).toEqual({ ok: false, code, param });
  });
});

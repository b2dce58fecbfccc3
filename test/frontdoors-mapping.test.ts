/**
 * The front doors' mapping of OpenAI's fields onto a model's own parameters, read from the
 * model's request schema (so a declared model maps as a built-in one does): `size` to
 * `resolution` + `aspect_ratio`, form text to the parameter's type, `input_reference` to `image`.
 */
import { describe, expect, it } from 'vitest';
import { findModel, type JsonSchema } from '../src/catalog/index.js';
import { ApiError } from '../src/errors.js';
import { geometryOf, mapSize } from '../src/frontdoors/size.js';
import { videoRequest } from '../src/frontdoors/video-request.js';
import { requestSchema } from '../src/http/docs/openapi.js';

const schemaOf = (id: string): JsonSchema => {
  const row = findModel(id);
  if (row === undefined) throw new Error(id);
  return requestSchema(row);
};
const T2V = schemaOf('vendora/famw-2.7-t2v'); // 480p/720p/1080p; adaptive, 16:9, 9:16, 1:1, 4:3, 3:4
const NO_RATIO = schemaOf('vendora/famw-2.7-i2v'); // 480p/720p/1080p, no aspect_ratio

describe('size -> resolution and aspect ratio', () => {
  it.each([
    ['1280x720', { resolution: '720p', aspect_ratio: '16:9' }],
    ['720x1280', { resolution: '720p', aspect_ratio: '9:16' }],
    ['1920x1080', { resolution: '1080p', aspect_ratio: '16:9' }],
    ['854x480', { resolution: '480p', aspect_ratio: '16:9' }],
    ['1024x1024', { resolution: '1080p', aspect_ratio: '1:1' }],
    ['512x512', { resolution: '480p', aspect_ratio: '1:1' }],
    ['960x720', { resolution: '720p', aspect_ratio: '4:3' }],
  ])('%s on a model with its ratios', (size, expected) => {
    expect(mapSize(size, geometryOf(T2V))).toEqual(expected);
  });

  it('a model without aspect_ratio renders 16:9 only: no aspect_ratio is sent, 9:16 and squares are refused', () => {
    expect(mapSize('1280x720', geometryOf(NO_RATIO))).toEqual({ resolution: '720p' });
    for (const size of ['720x1280', '1024x1024']) {
      const refused = mapSize(size, geometryOf(NO_RATIO));
      expect(refused).toBeInstanceOf(ApiError);
      expect(refused).toMatchObject({ status: 400, code: 'unsupported_value', param: 'size' });
    }
  });

  it("refuses what no resolution and ratio give, and what is not WxH; the message lists the model's sizes", () => {
    const refused = mapSize('1792x1024', geometryOf(T2V));
    expect(refused).toMatchObject({ code: 'unsupported_value', param: 'size' });
    expect((refused as ApiError).message).toContain('1280x720');
    for (const bad of ['big', '1280*720', '0x720', '1280x', 1280])
      expect(mapSize(bad, geometryOf(T2V))).toMatchObject({ code: 'invalid_parameter', param: 'size' });
  });

  it('a model whose resolutions and ratios are free (not listed) renders any size exactly', () => {
    const free: JsonSchema = { properties: { resolution: { type: 'string' }, aspect_ratio: { type: 'string' } } };
    expect(mapSize('1000x600', geometryOf(free))).toEqual({ resolution: '600p', aspect_ratio: '5:3' });
  });
});

describe('the video request in the seed words', () => {
  it("reads form text as each parameter's type, and maps seconds, size and input_reference[image_url]", () => {
    const mapped = videoRequest(
      { model: 'vendora/famw-2.7-t2v', prompt: 'p', seconds: '4', size: '720x1280', seed: '42', prompt_extend: 'false' },
      {},
      T2V,
      true,
    );
    expect(mapped.body).toEqual({
      model: 'vendora/famw-2.7-t2v',
      prompt: 'p',
      duration: 4,
      resolution: '720p',
      aspect_ratio: '9:16',
      seed: 42,
      prompt_extend: false,
    });
    expect(mapped.rename).toEqual({ duration: 'seconds', resolution: 'size', aspect_ratio: 'size' });
    const i2v = schemaOf('vendora/famw-3.0-i2v-spicy');
    expect(videoRequest({ model: 'm', prompt: 'p', input_reference: { image_url: 'https://example.com/a.png' } }, {}, i2v, true).body).toMatchObject({
      image: 'https://example.com/a.png',
    });
  });

  it('a file part becomes a data URL of the type its bytes say, checked once', () => {
    const pngBytes = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    const mapped = videoRequest(
      { model: 'm', prompt: 'p' },
      { input_reference: { bytes: pngBytes, type: 'application/octet-stream' } },
      schemaOf('vendora/famw-3.0-i2v-spicy'),
      true,
    );
    expect(String(mapped.body['image'])).toMatch(/^data:image\/png;base64,/);
    expect(mapped.checkedMedia).toEqual([{ value: mapped.body['image'], check: { ok: true, kind: 'data' } }]);
  });

  it('refuses a field said twice, and leaves an unknown model to validation (model first)', () => {
    expect(() => videoRequest({ model: 'm', prompt: 'p', seconds: '4', duration: 4 }, {}, T2V, false)).toThrow(
      expect.objectContaining({ param: 'seconds' }) as Error,
    );
    expect(videoRequest({ model: 'nope', prompt: 'p', seconds: 'x', size: 'y' }, {}, undefined, false).body).toEqual({ model: 'nope', prompt: 'p' });
  });
});

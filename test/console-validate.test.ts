import { describe, expect, it } from 'vitest';
import { MODELS, createValidator } from '../src/catalog/index.js';
import { consoleHints } from '../src/http/console/console-hints.js';
import { requestSchema } from '../src/http/docs/openapi.js';
import { validateRequest, type ConsoleHints } from '../console/src/validate.js';

/**
 * The console checks a request in the browser before sending it; its answer must be the
 * server's, code, param and message, or a person would be told one thing and then another.
 * Every model gets valid bodies and bodies with one or several faults of each kind.
 */

const hints: ConsoleHints = consoleHints(MODELS, 32 * 1024 * 1024);
const validator = createValidator(MODELS);
const PNG = 'data:image/png;base64,iVBORw0KGgo=';

function bodies(model: string, kind: 'video' | 'image'): Record<string, unknown>[] {
  const base = { model, prompt: 'a fox' };
  const common: Record<string, unknown>[] = [
    base,
    { ...base, prompt: '   ' },
    { ...base, prompt: 7 },
    { model },
    { ...base, bogus: 1, also: 2 },
    { ...base, seed: 1.5 },
    { ...base, seed: -5 },
    { ...base, seed: 'x' },
    { ...base, seed: null },
    { ...base, prompt_extend: 'yes' },
    { ...base, prompt_extend: null },
  ];
  if (kind === 'image') {
    return [
      ...common,
      { ...base, size: '1024x1024' },
      { ...base, size: '1024X1024' },
      { ...base, size: '99x1024' },
      { ...base, size: '1024x1024', width: 512 },
      { ...base, width: 100, height: 99999 },
      { ...base, width: 512.5 },
      { ...base, prompt: 'p'.repeat(10_001) },
      { ...base, n: 2, output_format: 'jpeg' },
      { ...base, size: 5, width: 'x' },
    ];
  }
  return [
    ...common,
    { ...base, duration: 99 },
    { ...base, duration: 0 },
    { ...base, duration: '5' },
    { ...base, duration: 3, resolution: '2k' },
    { ...base, resolution: '2K' },
    { ...base, resolution: '' },
    { ...base, aspect_ratio: '5:4' },
    { ...base, aspect_ratio: '' },
    { ...base, duration: 99, resolution: 'nope', aspect_ratio: '7:7' },
    { ...base, image: 'http://example.com/a.png' },
    { ...base, image: PNG, end_image: 'data:image/png;base64,a' },
    { ...base, image: 'https://example.com/a.png' },
    { ...base, images: [] },
    { ...base, images: ['https://example.com/a.png', 5, 'ftp://x'] },
    { ...base, images: Array.from({ length: 40 }, () => PNG) },
    { ...base, images: 'https://example.com/a.png' },
    { ...base, videos: [], audios: [] },
    { ...base, audio_enable: 1, negative_prompt: 3 },
    { ...base, images: [PNG], extra: { image_options: [{ type: 'subject', ref_name: 'cat' }] } },
    { ...base, images: [PNG], extra: { image_options: [{ type: 'object' }, { ref_name: 'x'.repeat(31) }] } },
    { ...base, images: [PNG], extra: { image_options: [{ ref_name: 'é'.repeat(16) }] } },
    { ...base, images: [PNG], extra: { other: true } },
    { ...base, images: [PNG], extra: { image_options: [{ colour: 'red' }] } },
    { ...base, images: [PNG], extra: { image_options: 'x' } },
    { ...base, images: [PNG], extra: [] },
    // Lengths: a URL over its limit (a data URL is not held to it), texts over theirs.
    { ...base, images: [`https://example.com/${'a'.repeat(2100)}`, PNG] },
    { ...base, image: `https://example.com/${'a'.repeat(2100)}`, end_image: `https://example.com/${'b'.repeat(2028)}` },
    { ...base, audio: `https://example.com/${'a'.repeat(2100)}` },
    { ...base, prompt: '😀'.repeat(10_001) },
    { ...base, prompt: '😀'.repeat(10_000) },
    { ...base, negative_prompt: 'n'.repeat(10_001) },
    { ...base, resolution: 'r'.repeat(65), aspect_ratio: 'a'.repeat(65) },
    { ...base, images: [PNG], extra: { image_options: [{ ref_name: 'x'.repeat(257) }] } },
  ];
}

describe('console validation matches the server', () => {
  for (const row of MODELS) {
    it(row.id, () => {
      const schema = requestSchema(row);
      const modelHints = hints.models[row.id] ?? {};
      for (const body of bodies(row.id, row.kind)) {
        const bytes = Buffer.byteLength(JSON.stringify(body));
        const server = validator.validate(row.kind, { body, bodyBytes: bytes });
        const expected = server.ok ? undefined : { code: server.error.code, param: server.error.param, message: server.error.message };
        expect(validateRequest(row.kind, schema, modelHints, body, bytes), JSON.stringify(body).slice(0, 200)).toEqual(expected);
      }
    });
  }

  it('finds faults at all (the bodies above are not all valid)', () => {
    const row = MODELS.find((r) => r.id === 'vendora/famw-2.7-t2v');
    expect(row).toBeDefined();
    if (!row) return;
    expect(validateRequest('video', requestSchema(row), {}, { model: row.id, prompt: 'x', duration: 99 }, 10)).toEqual({
      code: 'unsupported_value',
      param: 'duration',
      message: "'duration' must be <= 15; got 99.",
    });
  });
});

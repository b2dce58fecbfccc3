// `channels check --probe` against the documents the providers actually publish, not against a
// shape of our own: the fixtures in test/fixtures/upstream/ are copies of fal's queue OpenAPI
// documents and of a Replicate (cog) model version's `openapi_schema` (README.md there says where
// each comes from). A reading that only worked on our own shape would fail here.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseProfile, profileFor, type TargetProfile } from '../../src/channels/profiles.js';
import { ADAPTERS } from '../../src/channels/protocols/index.js';
import { compareWithSchema, falInputOf, inputOf } from '../../src/channels/schema-probe.js';
import { adapterContext } from '../fakes/adapter-context.js';
import { startReplicateFake, type ReplicateFake } from '../fakes/replicate.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`../fixtures/upstream/${name}`, import.meta.url), 'utf8'));

const HAPPY_HORSE = 'alibaba/happy-horse/reference-to-video';
const SEEDREAM = 'fal-ai/bytedance/seedream/v4/text-to-image';

function declared(protocol: 'fal' | 'replicate', model: string, raw: unknown): TargetProfile {
  const faults: string[] = [];
  const profile = parseProfile(raw, 'profile', protocol, model, faults);
  if (!profile) throw new Error(faults.join('; '));
  return profile;
}

describe('fal: the queue OpenAPI document of an endpoint, as fal serves it', () => {
  const horse = fixture('fal-openapi-happy-horse-reference-to-video.json');
  const seedream = fixture('fal-openapi-seedream-v4-text-to-image.json');

  it('the POST body of the endpoint names the input; nullable anyOf, integer enums and a choice of shapes are read', () => {
    const schema = falInputOf(horse, HAPPY_HORSE);
    expect(schema?.required).toEqual(['prompt', 'image_urls']);
    expect(schema?.properties['seed']).toEqual({ type: 'integer' });
    expect(schema?.properties['duration']).toEqual({ type: 'integer', enum: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] });
    expect(schema?.properties['image_urls']).toEqual({ type: 'array' });
    // ImageSize or a size name: neither a type nor an enum can be held against a mapping.
    expect(falInputOf(seedream, SEEDREAM)?.properties['image_size']).toEqual({});
    expect(falInputOf(seedream, SEEDREAM)?.properties['num_images']).toEqual({ type: 'integer', minimum: 1, maximum: 6 });
    // Another endpoint's path names no input in this document.
    expect(falInputOf(horse, SEEDREAM)).toBeUndefined();
  });

  it('the generic mapping is reported field by field; the required inputs are covered', () => {
    const schema = falInputOf(horse, HAPPY_HORSE);
    if (!schema) throw new Error('no input schema');
    const problems = compareWithSchema('fal', undefined, new Map(), schema);
    for (const field of ['negative_prompt', 'image_url', 'end_image_url', 'generate_audio', 'num_images'])
      expect(
        problems.some((line) => line.startsWith(`sends '${field}'`)),
        field,
      ).toBe(true);
    for (const field of ['prompt', 'image_urls', 'duration', 'resolution', 'aspect_ratio', 'seed'])
      expect(
        problems.some((line) => line.includes(`'${field}'`)),
        field,
      ).toBe(false);
    expect(problems.some((line) => line.startsWith('requires'))).toBe(false);
  });

  it('a declared profile with the wrong value type is caught; the corrected one matches', () => {
    const schema = falInputOf(horse, HAPPY_HORSE);
    if (!schema) throw new Error('no input schema');
    const inputs = { prompt: { field: 'prompt', type: 'string' }, images: { field: 'image_urls', type: 'media[]' }, seed: { field: 'seed', type: 'integer' } };
    const wrong = declared('fal', HAPPY_HORSE, { inputs: { ...inputs, duration: { field: 'duration', type: 'string', values: ['5', '10'] } } });
    expect(compareWithSchema('fal', wrong, new Map(), schema)).toEqual([
      `'duration' (from duration) takes [3,4,5,6,7,8,9,10,11,12,13,14,15]; the mapping can send ["5","10"]`,
    ]);
    const right = declared('fal', HAPPY_HORSE, { inputs: { ...inputs, duration: { field: 'duration', type: 'integer', min: 3, max: 15 } } });
    expect(compareWithSchema('fal', right, new Map(), schema)).toEqual([]);
  });

  it('a size sent as image_size.width/height meets the object-or-name image_size without a false alarm', () => {
    const schema = falInputOf(seedream, SEEDREAM);
    if (!schema) throw new Error('no input schema');
    const profile = declared('fal', SEEDREAM, {
      inputs: {
        prompt: { field: 'prompt', type: 'string' },
        width: { field: 'image_size.width', type: 'integer' },
        height: { field: 'image_size.height', type: 'integer' },
        n: { field: 'num_images', type: 'integer', min: 1, max: 6 },
        seed: { field: 'seed', type: 'integer' },
      },
    });
    expect(compareWithSchema('fal', profile, new Map(), schema)).toEqual([]);
  });
});

describe('Replicate: a model version openapi_schema in the shape cog publishes', () => {
  const flux = fixture('replicate-openapi-flux-schnell.json');
  let fake: ReplicateFake;
  beforeAll(async () => {
    fake = await startReplicateFake({ apiKey: 'r8_probe' });
  });
  afterAll(async () => {
    await fake.close();
  });

  it('enums behind allOf/$ref are read with their values', () => {
    const schema = inputOf(flux);
    expect(schema?.required).toEqual(['prompt']);
    expect(schema?.properties['aspect_ratio']).toEqual({
      type: 'string',
      enum: ['1:1', '16:9', '21:9', '3:2', '2:3', '4:5', '5:4', '3:4', '4:3', '9:16', '9:21'],
    });
    expect(schema?.properties['megapixels']).toEqual({ type: 'string', enum: ['1', '0.25'] });
    expect(schema?.properties['num_outputs']).toEqual({ type: 'integer', minimum: 1, maximum: 4 });
  });

  it('the built-in flux-schnell profile matches it; the generic width/height are reported as ignored', () => {
    const schema = inputOf(flux);
    if (!schema) throw new Error('no input schema');
    const profile = profileFor('replicate', 'black-forest-labs/flux-schnell');
    expect(compareWithSchema('replicate', profile, new Map(), schema)).toEqual([]);
    const generic = compareWithSchema('replicate', undefined, new Map(), schema);
    expect(generic).toContain(`sends 'width' (from width), which the model does not declare: it would be ignored`);
    expect(generic).toContain(`sends 'height' (from height), which the model does not declare: it would be ignored`);
  });

  it('the fake serves that shape: the adapter reads from it what it reads from the published document', async () => {
    const adapter = ADAPTERS.replicate;
    if (!adapter?.inputSchema) throw new Error('the replicate adapter reads no schema');
    const ctx = adapterContext({ baseUrl: fake.origin, apiKey: 'r8_probe', upstreamModel: 'black-forest-labs/flux-schnell' });
    try {
      const read = await adapter.inputSchema(ctx);
      expect(read).toEqual({ ok: true, schema: inputOf(flux) });
    } finally {
      await ctx.close();
    }
  });
});

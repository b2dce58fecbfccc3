import { describe, expect, it } from 'vitest';
import { BUILT_IN, nearestAspectRatio, planInputs, profileFor, type TargetProfile } from '../../src/channels/profiles.js';
import { compareWithSchema, inputOf } from '../../src/channels/schema-probe.js';

const profile = (protocol: TargetProfile['protocol'], model: string): TargetProfile => {
  const found = profileFor(protocol, model);
  if (!found) throw new Error(`no built-in profile ${protocol} ${model}`);
  return found;
};

describe('target profiles: the plan of inputs', () => {
  it('types and maps values: the string duration, 720p as mode standard; values that ask for nothing are not refused', () => {
    const kling = planInputs(
      profile('replicate', 'kwaivgi/kling-v2.1'),
      'video',
      { model: 'm', prompt: 'p', duration: 10, resolution: '720p', seed: -1, images: [] },
      't',
    );
    expect(kling).toEqual({
      ok: true,
      inputs: [
        { param: 'prompt', field: 'prompt', value: 'p' },
        { param: 'duration', field: 'duration', value: 10 },
        { param: 'resolution', field: 'mode', value: 'standard' },
      ],
    });
    const fal = planInputs(profile('fal', 'fal-ai/kling-video/v2.1/pro/image-to-video'), 'video', { prompt: 'p', duration: 5, resolution: '1080p' }, 't');
    expect(fal.ok && fal.inputs.find((input) => input.param === 'duration')?.value).toBe('5');
  });

  it('refuses, naming the parameter: a value out of the allowed ones, a field the closed profile lacks, a cross-field rule', () => {
    const kling = profile('replicate', 'kwaivgi/kling-v2.1');
    expect(planInputs(kling, 'video', { prompt: 'p', duration: 5, resolution: '480p' }, 't')).toMatchObject({ ok: false, problem: { param: 'resolution' } });
    expect(planInputs(kling, 'video', { prompt: 'p', duration: 5, videos: ['https://v.example/a.mp4'] }, 't')).toMatchObject({
      ok: false,
      problem: { param: 'videos' },
    });
    expect(planInputs(kling, 'video', { prompt: 'p', duration: 5, resolution: '720p', end_image: 'https://i.example/b.png' }, 't')).toMatchObject({
      ok: false,
      problem: { param: 'end_image' },
    });
  });

  it('a size becomes the nearest aspect ratio, by the ratio of logarithms', () => {
    expect(nearestAspectRatio(1536, 1024, ['1:1', '16:9', '3:2', '4:3'])).toBe('3:2');
    expect(nearestAspectRatio(1024, 1024, ['1:1', '16:9'])).toBe('1:1');
    expect(nearestAspectRatio(256, 2560, ['9:21', '9:16', '1:1'])).toBe('9:21');
  });

  it("a pixel range is checked on the request's own size parameter", () => {
    const t2i = profile('dashscope', 'wan2.6-t2i');
    expect(planInputs(t2i, 'image', { width: 1440, height: 1440, size: '1440x1440' }, 't').ok).toBe(true);
    expect(planInputs(t2i, 'image', { width: 2560, height: 256, size: '2560x256' }, 't')).toMatchObject({ ok: false, problem: { param: 'size' } });
    expect(planInputs(t2i, 'image', { width: 1024, height: 1536 }, 't')).toMatchObject({ ok: false, problem: { param: 'width' } });
  });

  it('every built-in profile cites a public page of its provider', () => {
    for (const builtIn of BUILT_IN)
      expect(builtIn.source, builtIn.model).toMatch(
        /^https:\/\/(fal\.ai|replicate\.com|www\.alibabacloud\.com|docs\.byteplus\.com|platform\.minimax\.io|docs\.platform\.pixverse\.ai|ai\.google\.dev|cloud\.google\.com|app\.klingai\.com|docs\.dev\.runwayml\.com|docs\.lumalabs\.ai|docs\.x\.ai)\//,
      );
  });
});

describe('the schema probe: a mapping against a published input schema', () => {
  // The shape fal publishes for an endpoint: the POST body names its input schema.
  const falOpenApi = {
    paths: {
      '/fal-ai/kling-video/v2.1/pro/image-to-video': {
        post: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/I2VInput' } } } } },
      },
    },
    components: {
      schemas: {
        I2VInput: {
          type: 'object',
          required: ['prompt', 'image_url'],
          properties: {
            prompt: { type: 'string' },
            image_url: { type: 'string' },
            duration: { allOf: [{ $ref: '#/components/schemas/DurationEnum' }] },
            negative_prompt: { type: 'string' },
            tail_image_url: { type: 'string' },
          },
        },
        DurationEnum: { type: 'string', enum: ['5', '10'] },
      },
    },
  };

  it('reads the input schema, enums behind a $ref included', () => {
    expect(inputOf(falOpenApi, 'I2VInput')).toEqual({
      required: ['prompt', 'image_url'],
      properties: {
        prompt: { type: 'string' },
        image_url: { type: 'string' },
        duration: { type: 'string', enum: ['5', '10'] },
        negative_prompt: { type: 'string' },
        tail_image_url: { type: 'string' },
      },
    });
  });

  it('the built-in profile matches; the generic mapping sends an integer duration and fields the endpoint does not declare', () => {
    const schema = inputOf(falOpenApi, 'I2VInput');
    if (!schema) throw new Error('no schema');
    expect(compareWithSchema('fal', profile('fal', 'fal-ai/kling-video/v2.1/pro/image-to-video'), new Map(), schema)).toEqual([]);
    const generic = compareWithSchema('fal', undefined, new Map(), schema);
    expect(generic).toContain(`'duration' (from duration) is the enum ["5","10"]; the mapping sends integer values`);
    expect(generic).toContain(`sends 'resolution' (from resolution), which the model does not declare: it would be ignored`);
    expect(generic.some((line) => line.startsWith(`sends 'end_image_url'`))).toBe(true);
  });

  it('a required input nothing maps to is reported', () => {
    const problems = compareWithSchema('replicate', undefined, new Map(), { properties: { start_image: { type: 'string' } }, required: ['start_image'] });
    expect(problems).toContain(`requires 'start_image', which no parameter maps to`);
  });
});

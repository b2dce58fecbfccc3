/**
 * Type-level tests of the SDK's per-model request types (generated from the catalog) and its
 * public signatures. Each `@ts-expect-error` line must fail to compile: if a refused parameter
 * ever compiled, the directive itself would be an error (TS2578). `npm run typecheck` checks this
 * file, and so does test/types/typecheck.test.ts under vitest.
 *
 * Nothing here talks to a server: `accept*` only returns its argument.
 */
import { describe, expectTypeOf, it } from 'vitest';
import {
  Mediagate,
  RateLimitError,
  TaskFailedError,
  ValidationError,
  type ImageCreateParams,
  type ImageModelId,
  type ImageModels,
  type ImageTask,
  type ImageTaskCreated,
  type ModelInfo,
  type ProgressEvent,
  type VideoCreateParams,
  type VideoModelId,
  type VideoModels,
  type VideoTask,
} from '../../src/client/index.js';

const acceptVideo = (params: VideoCreateParams): VideoCreateParams => params;
const acceptImage = (params: ImageCreateParams): ImageCreateParams => params;
const IMG = 'data:image/png;base64,iVBORw0KGgo=';

describe('video request types', () => {
  it('accepts each model with its own parameters and listed values', () => {
    acceptVideo({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox', duration: 4, resolution: '480p', aspect_ratio: '9:16', seed: 7, prompt_extend: true });
    acceptVideo({ model: 'vendora/famw-2.7-i2v', prompt: 'a fox', image: IMG, end_image: IMG });
    acceptVideo({ model: 'vendorc-h3-image-to-video', prompt: 'a fox', image: IMG, resolution: '2K' });
    acceptVideo({ model: 'vendorc-h3-enhanced-reference-to-video', prompt: 'a fox', aspect_ratio: '21:9', resolution: '4k' });
    acceptVideo({
      model: 'vendord/v6/reference-to-video',
      prompt: '@image1 runs',
      images: [IMG],
      extra: { image_options: [{ type: 'subject', ref_name: 'fox' }] },
    });
    acceptVideo({ model: 'vendord/v6/image-to-video', prompt: 'a fox' });
    // "Not shown" values are any string of the right type.
    acceptVideo({ model: 'vendorc-h3-max-reference-to-video', prompt: 'a fox', resolution: '900p', aspect_ratio: '5:4', duration: 40 });
    acceptVideo({ model: 'vendorb/famsd-2.0-mini-ref2v-spicy', prompt: 'a fox', videos: [IMG], aspect_ratio: '21:9' });
  });

  it('refuses a parameter the model does not accept', () => {
    // @ts-expect-error end_image is not a parameter of the text-to-video model
    acceptVideo({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox', end_image: IMG });
    // @ts-expect-error aspect_ratio is "not configurable" on this model
    acceptVideo({ model: 'vendora/famw-2.7-i2v', prompt: 'a fox', image: IMG, aspect_ratio: '16:9' });
    // @ts-expect-error end_image is not accepted by vendord/v6/image-to-video
    acceptVideo({ model: 'vendord/v6/image-to-video', prompt: 'a fox', end_image: IMG });
    // @ts-expect-error audio_enable is not listed for famw-2.7-i2v
    acceptVideo({ model: 'vendora/famw-2.7-i2v', prompt: 'a fox', image: IMG, audio_enable: true });
    // @ts-expect-error a field that is no parameter at all
    acceptVideo({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox', callback_url: 'https://example.com' });
  });

  it('refuses a value outside the model’s list, case-sensitively', () => {
    // @ts-expect-error 480p is not offered by the spicy 2.7 channel (720p, 1080p)
    acceptVideo({ model: 'vendora/famw-2.7-i2v-spicy', prompt: 'a fox', image: IMG, resolution: '480p' });
    // @ts-expect-error 2k is lowercase only on other vendorc models; this one lists 2K
    acceptVideo({ model: 'vendorc-h3-image-to-video', prompt: 'a fox', image: IMG, resolution: '2k' });
    // @ts-expect-error 21:9 is not among famw's aspect ratios
    acceptVideo({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox', aspect_ratio: '21:9' });
    // @ts-expect-error image_options type is subject | background
    acceptVideo({ model: 'vendord/v6/reference-to-video', prompt: 'x', images: [IMG], extra: { image_options: [{ type: 'foreground' }] } });
  });

  it('requires the model’s required inputs', () => {
    // @ts-expect-error image is required for image-to-video
    acceptVideo({ model: 'vendora/famw-2.7-i2v', prompt: 'a fox' });
    // @ts-expect-error aspect_ratio is required for the enhanced reference model
    acceptVideo({ model: 'vendorc-h3-enhanced-reference-to-video', prompt: 'a fox' });
    // @ts-expect-error images is required for vendord/v6/reference-to-video
    acceptVideo({ model: 'vendord/v6/reference-to-video', prompt: 'a fox' });
    // @ts-expect-error prompt is always required
    acceptVideo({ model: 'vendora/famw-2.7-t2v' });
  });

  it('refuses wrong types and unknown models', () => {
    // @ts-expect-error duration is an integer, not a string
    acceptVideo({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox', duration: '4' });
    // @ts-expect-error images is an array of media strings
    acceptVideo({ model: 'vendora/famw-2.7-ref2v-uncensored', prompt: 'a fox', images: IMG });
    // @ts-expect-error not a model of the catalog
    acceptVideo({ model: 'vendora/famw-9-t2v', prompt: 'a fox' });
    // @ts-expect-error an image model is not a video model
    acceptVideo({ model: 'vendora/famz-image-spicy', prompt: 'a fox' });
  });

  it('narrows by model id', () => {
    expectTypeOf<VideoModels['vendora/famw-2.7-t2v']['resolution']>().toEqualTypeOf<'480p' | '720p' | '1080p' | undefined>();
    expectTypeOf<VideoModels['vendorc-h3-max-reference-to-video']['resolution']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<VideoModels['vendora/famw-2.7-i2v']['image']>().toEqualTypeOf<string>();
    expectTypeOf<VideoModels['vendord/v6/image-to-video']['image']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<VideoModels['vendord/v6/reference-to-video']['images']>().toEqualTypeOf<readonly string[]>();
    expectTypeOf<Extract<VideoCreateParams, { model: 'vendora/famw-2.7-t2v' }>>().toEqualTypeOf<VideoModels['vendora/famw-2.7-t2v']>();
    expectTypeOf<VideoModelId>().toEqualTypeOf<VideoCreateParams['model']>();
    expectTypeOf<'vendora/famw-2.7-t2v'>().toExtend<VideoModelId>();
    expectTypeOf<'vendora/famz-image-spicy'>().not.toExtend<VideoModelId>();
  });
});

describe('image request types', () => {
  it('accepts size, or width and/or height', () => {
    acceptImage({ model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', size: '1024x768' });
    acceptImage({ model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', width: 512 });
    acceptImage({
      model: 'vendora/famz-image-spicy-pro',
      prompt: 'a lighthouse',
      width: 512,
      height: 2048,
      seed: null,
      prompt_extend: null,
      n: 1,
      output_format: 'png',
    });
  });

  it('refuses size together with width or height, and a malformed size', () => {
    // @ts-expect-error size excludes width
    acceptImage({ model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', size: '1024x768', width: 512 });
    // @ts-expect-error size excludes height
    acceptImage({ model: 'vendora/famz-image-spicy-pro', prompt: 'a lighthouse', size: '1024x768', height: 512 });
    // @ts-expect-error size is WIDTHxHEIGHT
    acceptImage({ model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', size: '1024*768' });
  });

  it('refuses values and parameters the model does not have', () => {
    // @ts-expect-error n is only 1
    acceptImage({ model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', n: 2 });
    // @ts-expect-error output_format is only png
    acceptImage({ model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', output_format: 'jpeg' });
    // @ts-expect-error seed is nullable only on the pro model
    acceptImage({ model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', seed: null });
    // @ts-expect-error a video parameter
    acceptImage({ model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', duration: 5 });
    // @ts-expect-error a video model is not an image model
    acceptImage({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox' });
  });

  it('types each model', () => {
    expectTypeOf<ImageModels['vendora/famz-image-spicy-pro']['seed']>().toEqualTypeOf<number | null | undefined>();
    expectTypeOf<ImageModels['vendora/famz-image-spicy']['seed']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<ImageModelId>().toEqualTypeOf<'vendora/famz-image-spicy' | 'vendora/famz-image-spicy-pro'>();
  });
});

describe('client signatures', () => {
  it('returns the family’s objects', () => {
    type Client = InstanceType<typeof Mediagate>;
    expectTypeOf<Client['videos']['create']>().parameter(0).toEqualTypeOf<VideoCreateParams>();
    expectTypeOf<Client['videos']['create']>().returns.resolves.toEqualTypeOf<VideoTask>();
    expectTypeOf<Client['videos']['get']>().returns.resolves.toEqualTypeOf<VideoTask>();
    expectTypeOf<Client['videos']['createAndWait']>().returns.resolves.toEqualTypeOf<VideoTask>();
    expectTypeOf<Client['images']['create']>().parameter(0).toEqualTypeOf<ImageCreateParams>();
    expectTypeOf<Client['images']['create']>().returns.resolves.toEqualTypeOf<ImageTaskCreated>();
    expectTypeOf<Client['images']['createAndWait']>().returns.resolves.toEqualTypeOf<ImageTask>();
    expectTypeOf<Client['models']['list']>().returns.resolves.toEqualTypeOf<ModelInfo[]>();
  });

  it('types progress events and errors', () => {
    type VideoWait = NonNullable<Parameters<InstanceType<typeof Mediagate>['videos']['createAndWait']>[1]>;
    expectTypeOf<NonNullable<VideoWait['onProgress']>>().parameter(0).toEqualTypeOf<ProgressEvent<VideoTask>>();
    expectTypeOf<ProgressEvent['progress']>().toEqualTypeOf<number | null>();
    expectTypeOf<ValidationError['code']>().toEqualTypeOf<string>();
    expectTypeOf<ValidationError['param']>().toEqualTypeOf<string>();
    expectTypeOf<ValidationError['status']>().toEqualTypeOf<number>();
    expectTypeOf<RateLimitError['retryAfter']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<TaskFailedError<VideoTask>['task']>().toEqualTypeOf<VideoTask>();
  });
});

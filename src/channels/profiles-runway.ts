/**
 * Built-in target profiles of Runway's API for the `runway` protocol (profiles.ts explains
 * profiles). Open profiles: protocols/runway.ts builds the body; these say what each model takes.
 *
 * Sources: https://docs.dev.runwayml.com/api/ and runwayml/sdk-node sdk-node/src/resources/image-to-video.ts
 * and sdk-node/src/resources/text-to-video.ts (version 4.12.0):
 * - `gen4.5`: text or image to video; `duration` an integer 2..10 (required); `ratio` 1280:720,
 *   720:1280, 1104:832, 960:960, 832:1104, 1584:672 from an image, only 1280:720 or 720:1280 from
 *   text; `seed`; a first frame only.
 * - `gen4_turbo`: image to video only; `duration` 5 or 10 (https://docs.dev.runwayml.com/guides/models/);
 *   the same ratios as gen4.5 from an image; `seed`; a first frame only.
 * - `veo3.1`: text or image to video; `duration` 4, 6 or 8; `ratio` 1280:720, 720:1280, 1080:1920,
 *   1920:1080; `audio`; a first frame and optionally a last one; no seed.
 */
import type { ResolvedParams } from '../catalog/index.js';

/*
 * The shapes below are profiles.ts's (TargetProfile, ParamRule, ParamProblem), spelled out here
 * because profiles.ts imports this file: BUILT_IN's spread checks that they still fit.
 */
interface ParamProblem {
  readonly param: string;
  readonly message: string;
}
type Scalar = string | number | boolean | null;
type ParamRule =
  | { readonly refuse: string; readonly accept?: readonly Scalar[] }
  | {
      readonly field: string;
      readonly type?: 'integer' | 'string';
      readonly map?: Readonly<Record<string, Scalar>>;
      readonly values?: readonly Scalar[];
      readonly min?: number;
      readonly max?: number;
      readonly omit?: readonly Scalar[];
    };
interface RunwayProfile {
  readonly protocol: 'runway';
  readonly model: string;
  readonly kind: 'video';
  readonly source: string;
  readonly closed: false;
  readonly params: Readonly<Record<string, ParamRule>>;
  readonly across: (params: ResolvedParams, target: string) => ParamProblem | undefined;
}

const DOCS = 'https://docs.dev.runwayml.com/api/';

/** Our aspect ratio -> Runway's pixel ratio for the Gen-4 models (720p). */
const GEN4_RATIOS: Readonly<Record<string, string>> = {
  '16:9': '1280:720',
  '9:16': '720:1280',
  '4:3': '1104:832',
  '1:1': '960:960',
  '3:4': '832:1104',
  '21:9': '1584:672',
};
/** Veo 3.1 through Runway: 16:9 or 9:16, at 720p or 1080p. */
const VEO_RATIOS: Readonly<Record<string, string>> = { '16:9 720p': '1280:720', '9:16 720p': '720:1280', '16:9 1080p': '1920:1080', '9:16 1080p': '1080:1920' };

/**
 * The `ratio` Runway takes for our aspect ratio and resolution. `ratio` is required: with no
 * aspect ratio (or `adaptive`) the landscape ratio is sent, and Runway crops the frame to it.
 */
export function runwayRatio(model: string, aspectRatio: unknown, resolution: unknown): string {
  const ratio = typeof aspectRatio === 'string' && aspectRatio !== 'adaptive' ? aspectRatio : '16:9';
  if (model.startsWith('veo')) return VEO_RATIOS[`${ratio} ${resolution === '1080p' ? '1080p' : '720p'}`] ?? '1280:720';
  return GEN4_RATIOS[ratio] ?? '1280:720';
}

function across(model: string) {
  return (params: ResolvedParams, target: string): ParamProblem | undefined => {
    const image = params['image'] !== undefined;
    if (model === 'gen4_turbo' && !image) return { param: 'image', message: `${target} makes video from an image only; send 'image'.` };
    if (params['end_image'] !== undefined && !image)
      return { param: 'end_image', message: `'end_image' (the last frame) needs 'image' (the first frame) on ${target}.` };
    const ratio = params['aspect_ratio'];
    if (model === 'gen4.5' && !image && typeof ratio === 'string' && ratio !== 'adaptive' && ratio !== '16:9' && ratio !== '9:16')
      return { param: 'aspect_ratio', message: `${target} makes text-to-video in 16:9 or 9:16 only.` };
    return undefined;
  };
}

const GEN4_REFUSALS: Readonly<Record<string, ParamRule>> = {
  end_image: { refuse: 'this Gen-4 model takes a first frame only.' },
  audio_enable: { refuse: 'this Gen-4 model makes silent video.', accept: [false] },
  // The resolution travels inside `ratio` (1280:720 is 720p): nothing of its own is sent.
  resolution: { refuse: 'this Gen-4 model renders 720p only.', accept: ['720p'] },
  aspect_ratio: { field: 'ratio', map: GEN4_RATIOS, omit: ['adaptive'] },
  seed: { field: 'seed', type: 'integer', min: 0, max: 4294967295, omit: [-1] },
};

const COMMON: Readonly<Record<string, ParamRule>> = {
  images: { refuse: 'Runway takes frames here, not reference images.' },
  videos: { refuse: 'these models take no reference videos.' },
  audios: { refuse: 'these models take no reference audio.' },
  audio: { refuse: 'these models take no driving audio.' },
  negative_prompt: { refuse: 'Runway has no negative prompt.' },
  prompt_extend: { refuse: 'Runway has no prompt rewriting switch.', accept: [false] },
  extra: { refuse: 'Runway has no such options.' },
};

function profile(model: 'gen4_turbo' | 'gen4.5' | 'veo3.1'): RunwayProfile {
  const params: Record<string, ParamRule> =
    model === 'veo3.1'
      ? {
          ...COMMON,
          duration: { field: 'duration', type: 'integer', values: [4, 6, 8] },
          // Both travel together in `ratio` (runwayRatio): 16:9 at 1080p is 1920:1080.
          resolution: { refuse: 'Veo 3.1 through Runway renders 720p or 1080p.', accept: ['720p', '1080p'] },
          aspect_ratio: { refuse: 'Veo 3.1 through Runway makes 16:9 or 9:16.', accept: ['16:9', '9:16', 'adaptive'] },
          seed: { refuse: 'Veo 3.1 through Runway takes no seed.', accept: [-1] },
        }
      : {
          ...COMMON,
          ...GEN4_REFUSALS,
          duration: model === 'gen4.5' ? { field: 'duration', type: 'integer', min: 2, max: 10 } : { field: 'duration', type: 'integer', values: [5, 10] },
        };
  return { protocol: 'runway', model, kind: 'video', source: DOCS, closed: false, params, across: across(model) };
}

export const RUNWAY_PROFILES: readonly RunwayProfile[] = [profile('gen4_turbo'), profile('gen4.5'), profile('veo3.1')];

/**
 * Built-in target profiles of Kling's own API for the `kling` protocol (profiles.ts explains
 * profiles). Open profiles: protocols/kling.ts builds the body; these say what each model takes,
 * so a request it cannot render is a 400 at create naming the parameter.
 *
 * Sources: https://app.klingai.com/global/dev/document-api/apiReference/model/textToVideo and
 * .../model/imageToVideo (fields: `duration` "5" or "10", `aspect_ratio` 16:9, 9:16 or 1:1,
 * `mode` std or pro, `sound` on or off, `image_tail` with `image`; no seed, no reference images on
 * these endpoints) and the capability map of the same docs (kling-v2-6 makes sound in pro mode
 * only; kling-v3 takes any whole duration from 3 to 15 s).
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
interface KlingProfile {
  readonly protocol: 'kling';
  readonly model: string;
  readonly kind: 'video';
  readonly source: string;
  readonly closed: false;
  readonly params: Readonly<Record<string, ParamRule>>;
  readonly across: (params: ResolvedParams, target: string) => ParamProblem | undefined;
}

const DOCS = 'https://app.klingai.com/global/dev/document-api/apiReference/model/textToVideo';

function across(model: string) {
  return (params: ResolvedParams, target: string): ParamProblem | undefined => {
    if (params['end_image'] !== undefined && params['image'] === undefined)
      return { param: 'end_image', message: `'end_image' (the last frame) needs 'image' (the first frame) on ${target}.` };
    // image2video takes no aspect_ratio: the first frame sets it (imageToVideo fields).
    if (params['image'] !== undefined && typeof params['aspect_ratio'] === 'string' && params['aspect_ratio'] !== 'adaptive')
      return { param: 'aspect_ratio', message: `${target} takes its aspect ratio from the first frame; leave 'aspect_ratio' out.` };
    if (model === 'kling-v2-6' && params['audio_enable'] === true && params['resolution'] !== '1080p')
      return { param: 'audio_enable', message: `${target} makes sound in pro mode only; ask for "resolution": "1080p" or "audio_enable": false.` };
    return undefined;
  };
}

const seconds = (values: readonly number[]): Record<string, string> => Object.fromEntries(values.map((n) => [String(n), String(n)]));

function klingProfile(model: 'kling-v2-6' | 'kling-v3'): KlingProfile {
  return {
    protocol: 'kling',
    model,
    kind: 'video',
    source: DOCS,
    closed: false,
    params: {
      // Sent as a string ("5"): the map says which whole seconds the model renders.
      duration: { field: 'duration', type: 'string', map: seconds(model === 'kling-v3' ? [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : [5, 10]) },
      resolution: { field: 'mode', map: { '720p': 'std', '1080p': 'pro' } },
      aspect_ratio: { field: 'aspect_ratio', values: ['16:9', '9:16', '1:1'], omit: ['adaptive'] },
      images: { refuse: 'reference images go to another Kling endpoint (multi-image2video), not this one.' },
      videos: { refuse: 'Kling takes no reference videos here.' },
      audios: { refuse: 'Kling takes no reference audio.' },
      audio: { refuse: 'Kling takes no driving audio here.' },
      seed: { refuse: 'Kling takes no seed.', accept: [-1] },
      prompt_extend: { refuse: 'Kling has no prompt rewriting switch.', accept: [false] },
      extra: { refuse: 'Kling has no such options.' },
    },
    across: across(model),
  };
}

export const KLING_PROFILES: readonly KlingProfile[] = [klingProfile('kling-v2-6'), klingProfile('kling-v3')];

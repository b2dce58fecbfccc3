/**
 * Built-in target profiles of Veo 3.1 for the `gemini` and `vertex` protocols (profiles.ts
 * explains profiles). Open profiles: the adapters build the body (protocols/veo.ts); these say
 * what each model takes, so a request it cannot render is a 400 at create naming the parameter.
 *
 * Sources: https://ai.google.dev/gemini-api/docs/video ("Veo model parameters": 4, 6 or 8 s;
 * 16:9 or 9:16; 720p, 1080p and 4k, where 1080p, 4k and reference images need 8 s; at most three
 * reference images; a last frame goes with a first frame; Veo 3.1 always makes sound on the Gemini
 * API), https://cloud.google.com/vertex-ai/generative-ai/docs/models/veo/3-1-generate (the same
 * values; `seed` 0..4294967295 and `generateAudio` on Vertex AI), and googleapis/js-genai
 * js-genai/src/converters/_models_converters.ts (`seed`, `generateAudio` refused in Gemini API mode).
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
      readonly type?: 'integer';
      readonly values?: readonly Scalar[];
      readonly min?: number;
      readonly max?: number;
      readonly omit?: readonly Scalar[];
    };
interface GoogleProfile {
  readonly protocol: 'gemini' | 'vertex';
  readonly model: string;
  readonly kind: 'video';
  readonly source: string;
  readonly closed: false;
  readonly params: Readonly<Record<string, ParamRule>>;
  readonly across: (params: ResolvedParams, target: string) => ParamProblem | undefined;
}

const GEMINI_DOCS = 'https://ai.google.dev/gemini-api/docs/video';
const VERTEX_DOCS = 'https://cloud.google.com/vertex-ai/generative-ai/docs/models/veo/3-1-generate';

/** The Veo 3.1 family on both APIs. */
export const VEO_MODELS = ['veo-3.1-generate-preview', 'veo-3.1-fast-generate-preview', 'veo-3.1-generate-001'] as const;
export const VEO_MAX_REFERENCE_IMAGES = 3;

/** Rules across parameters (the docs' footnotes), shared by every Veo 3.1 target. */
export function veoAcross(params: ResolvedParams, target: string): ParamProblem | undefined {
  const duration = params['duration'];
  const resolution = params['resolution'];
  const refs = Array.isArray(params['images']) ? params['images'].length : 0;
  if ((resolution === '1080p' || resolution === '4k') && duration !== 8)
    return { param: 'resolution', message: `'resolution' '${String(resolution)}' needs an 8 s video on ${target}; ask for "duration": 8 or 720p.` };
  if (refs > VEO_MAX_REFERENCE_IMAGES)
    return { param: 'images', message: `'images' holds ${refs} reference images; ${target} takes at most ${VEO_MAX_REFERENCE_IMAGES}.` };
  if (refs > 0 && duration !== 8) return { param: 'images', message: `reference images need an 8 s video on ${target}; ask for "duration": 8.` };
  if (params['end_image'] !== undefined && params['image'] === undefined)
    return { param: 'end_image', message: `'end_image' (the last frame) needs 'image' (the first frame) on ${target}.` };
  if (refs > 0 && params['image'] !== undefined) return { param: 'images', message: `${target} takes reference images or a first frame, not both.` };
  return undefined;
}

function veoProfile(protocol: 'gemini' | 'vertex', model: string): GoogleProfile {
  const fast = model.includes('fast');
  const params: Record<string, ParamRule> = {
    duration: { field: 'parameters.durationSeconds', type: 'integer', values: [4, 6, 8] },
    resolution: { field: 'parameters.resolution', values: ['720p', '1080p', '4k'] },
    aspect_ratio: { field: 'parameters.aspectRatio', values: ['16:9', '9:16'], omit: ['adaptive'] },
    videos: { refuse: 'Veo extends only a video it made itself; reference videos are not an input.' },
    audios: { refuse: 'Veo takes no reference audio.' },
    audio: { refuse: 'Veo takes no driving audio.' },
    extra: { refuse: 'Veo has no such options.' },
    ...(fast ? { images: { refuse: 'reference images are a Veo 3.1 feature, not Veo 3.1 Fast.' } } : {}),
    ...(protocol === 'gemini'
      ? {
          seed: { refuse: 'the Gemini API takes no seed for Veo (use a vertex channel).', accept: [-1] },
          audio_enable: { refuse: 'Veo 3.1 on the Gemini API always makes sound.', accept: [true] },
        }
      : { seed: { field: 'parameters.seed', type: 'integer', min: 0, max: 4294967295, omit: [-1] } }),
  };
  return {
    protocol,
    model,
    kind: 'video',
    source: protocol === 'gemini' ? GEMINI_DOCS : VERTEX_DOCS,
    closed: false,
    params,
    across: veoAcross,
  };
}

export const GOOGLE_PROFILES: readonly GoogleProfile[] = (['gemini', 'vertex'] as const).flatMap((protocol) =>
  VEO_MODELS.map((model) => veoProfile(protocol, model)),
);

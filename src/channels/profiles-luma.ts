/**
 * Built-in target profiles of Luma's Dream Machine API for the `luma` protocol (profiles.ts
 * explains profiles). Open profiles: protocols/luma.ts builds the body.
 *
 * Sources: https://docs.lumalabs.ai/docs/video-generation and lumalabs/lumaai-node
 * lumaai-node/src/resources/generations/generations.ts (`GenerationRequest`: `model` ray-2 or ray-flash-2,
 * `duration` "5s" or "9s", `resolution` 540p, 720p, 1080p or 4k, `aspect_ratio` 1:1, 16:9, 9:16,
 * 4:3, 3:4, 21:9, 9:21, `keyframes.frame0` / `frame1`; no seed, no negative prompt, no audio).
 */

/*
 * The shapes below are profiles.ts's (TargetProfile, ParamRule), spelled out here because
 * profiles.ts imports this file: BUILT_IN's spread checks that they still fit.
 */
type Scalar = string | number | boolean | null;
type ParamRule =
  | { readonly refuse: string; readonly accept?: readonly Scalar[] }
  | {
      readonly field: string;
      readonly type?: 'string';
      readonly map?: Readonly<Record<string, Scalar>>;
      readonly values?: readonly Scalar[];
      readonly omit?: readonly Scalar[];
    };
interface LumaProfile {
  readonly protocol: 'luma';
  readonly model: string;
  readonly kind: 'video';
  readonly source: string;
  readonly closed: false;
  readonly params: Readonly<Record<string, ParamRule>>;
}

const DOCS = 'https://docs.lumalabs.ai/docs/video-generation';

function profile(model: 'ray-2' | 'ray-flash-2'): LumaProfile {
  return {
    protocol: 'luma',
    model,
    kind: 'video',
    source: DOCS,
    closed: false,
    params: {
      duration: { field: 'duration', map: { '5': '5s', '9': '9s' } },
      resolution: { field: 'resolution', values: ['540p', '720p', '1080p', '4k'] },
      aspect_ratio: { field: 'aspect_ratio', values: ['1:1', '16:9', '9:16', '4:3', '3:4', '21:9', '9:21'], omit: ['adaptive'] },
      images: { refuse: 'Ray takes keyframes, not reference images.' },
      videos: { refuse: 'Ray takes no reference videos here.' },
      audios: { refuse: 'Ray takes no reference audio.' },
      audio: { refuse: 'Ray takes no driving audio.' },
      audio_enable: { refuse: 'Ray makes silent video.', accept: [false] },
      seed: { refuse: 'Luma takes no seed.', accept: [-1] },
      negative_prompt: { refuse: 'Luma has no negative prompt.' },
      prompt_extend: { refuse: 'Luma has no prompt rewriting switch.', accept: [false] },
      extra: { refuse: 'Luma has no such options.' },
    },
  };
}

export const LUMA_PROFILES: readonly LumaProfile[] = [profile('ray-2'), profile('ray-flash-2')];

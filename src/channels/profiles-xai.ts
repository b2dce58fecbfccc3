/**
 * The built-in target profile of Grok Imagine video for the `xai` protocol (profiles.ts explains
 * profiles). Open profile: protocols/xai.ts builds the body.
 *
 * Source: https://docs.x.ai/docs/guides/video-generation (`duration` 1 to 15 s; `aspect_ratio`
 * 16:9, 9:16, 1:1, 4:3, 3:4, 3:2, 2:3; `resolution` 480p, 720p, 1080p; one source image; no last
 * frame, no seed, no negative prompt; the video comes with sound). The resolutions are the
 * `VideoResolution` enum of xAI's SDK (https://github.com/xai-org/xai-sdk-python,
 * xai-sdk-python/src/xai_sdk/proto/v6/video_pb2.pyi: 480P, 720P, 1080P).
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
      readonly type?: 'integer';
      readonly values?: readonly Scalar[];
      readonly min?: number;
      readonly max?: number;
      readonly omit?: readonly Scalar[];
    };
interface XaiProfile {
  readonly protocol: 'xai';
  readonly model: string;
  readonly kind: 'video';
  readonly source: string;
  readonly closed: false;
  readonly params: Readonly<Record<string, ParamRule>>;
}

export const XAI_PROFILES: readonly XaiProfile[] = [
  {
    protocol: 'xai',
    model: 'grok-imagine-video',
    kind: 'video',
    source: 'https://docs.x.ai/docs/guides/video-generation',
    closed: false,
    params: {
      duration: { field: 'duration', type: 'integer', min: 1, max: 15 },
      resolution: { field: 'resolution', values: ['480p', '720p', '1080p'] },
      aspect_ratio: { field: 'aspect_ratio', values: ['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3'], omit: ['adaptive'] },
      end_image: { refuse: 'Grok Imagine takes no last frame.' },
      images: { refuse: 'Grok Imagine takes one source image here, not reference images.' },
      videos: { refuse: 'video editing is another endpoint.' },
      audios: { refuse: 'Grok Imagine takes no reference audio.' },
      audio: { refuse: 'Grok Imagine takes no driving audio.' },
      audio_enable: { refuse: 'Grok Imagine video comes with sound and has no switch for it.', accept: [true] },
      seed: { refuse: 'xAI takes no seed.', accept: [-1] },
      negative_prompt: { refuse: 'xAI has no negative prompt.' },
      prompt_extend: { refuse: 'xAI has no prompt rewriting switch.', accept: [false] },
      extra: { refuse: 'xAI has no such options.' },
    },
  },
];

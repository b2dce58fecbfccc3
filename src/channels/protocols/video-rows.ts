import type { ParamMapping } from '../protocol.js';

/**
 * The parameter-mapping rows the video-only protocols of 2026 (`kling`, `runway`, `luma`, `xai`)
 * share word for word: what none of them takes, and what a one-MP4-per-task upstream ignores.
 * Each adapter's table lists its own rows first, then these where its order puts them, so the
 * generated tables of docs/channels.md read as before.
 */

/** Reference videos, reference audio and driving audio: none of these upstreams takes them. */
export const NO_REFERENCE_AV: readonly ParamMapping[] = [
  { param: 'videos', upstream: '', handling: 'refused' },
  { param: 'audios', upstream: '', handling: 'refused' },
  { param: 'audio', upstream: '', handling: 'refused' },
];

/** A negative prompt and prompt rewriting, which the upstream has no field for. */
export const NO_PROMPT_FIELDS: readonly ParamMapping[] = [
  { param: 'negative_prompt', upstream: '', handling: 'refused', note: 'no such field upstream' },
  { param: 'prompt_extend', upstream: '', handling: 'refused', note: 'no such field upstream; false is accepted' },
];

/** The closing rows of a protocol that makes one MP4 video per task (`maker` names who makes it). */
export function oneMp4PerTask(maker: string): readonly ParamMapping[] {
  return [
    { param: 'extra', upstream: '', handling: 'refused' },
    { param: 'size', upstream: '', handling: 'refused', note: 'video only' },
    { param: 'width', upstream: '', handling: 'refused', note: 'video only' },
    { param: 'height', upstream: '', handling: 'refused', note: 'video only' },
    { param: 'n', upstream: '', handling: 'ignored', note: 'one video per task' },
    { param: 'output_format', upstream: '', handling: 'ignored', note: `${maker} makes MP4` },
  ];
}

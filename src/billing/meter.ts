/**
 * What a completed task delivered, measured from its files: the seconds of its videos (read
 * from each file's MP4 header, not the requested duration) and the count of its images.
 */
import { readMp4Duration } from '../media/mp4-duration.js';
import { billedSeconds } from './cost.js';

export interface DeliveredFile {
  readonly path: string;
  readonly type: 'video' | 'image';
}

export interface Metered {
  /** Billed seconds: the videos' measured durations, summed, to the nearest second (at least 1); 0 without a video. */
  readonly seconds: number;
  readonly images: number;
}

export type MeterResult = { readonly ok: true; readonly value: Metered } | { readonly ok: false; readonly reason: string };

export async function meter(files: readonly DeliveredFile[]): Promise<MeterResult> {
  let measured = 0;
  let videos = 0;
  let images = 0;
  for (const file of files) {
    if (file.type === 'image') {
      images += 1;
      continue;
    }
    const duration = await readMp4Duration(file.path);
    if (!duration.ok) return { ok: false, reason: `${file.path}: ${duration.reason}` };
    measured += duration.seconds;
    videos += 1;
  }
  return { ok: true, value: { seconds: videos === 0 ? 0 : billedSeconds(measured), images } };
}

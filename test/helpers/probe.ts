import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import ffprobe from '@ffprobe-installer/ffprobe';

const run = promisify(execFile);

export interface Probe {
  readonly duration: number;
  readonly video?: { width: number; height: number; codec: string; duration: number };
  readonly audio?: { codec: string; duration: number };
  readonly formatName: string;
}

interface RawStream {
  codec_type: string;
  codec_name: string;
  width?: number;
  height?: number;
  duration?: string;
}

/** ffprobe of a media file (path or URL), reduced to what the specs assert. */
export async function probe(target: string): Promise<Probe> {
  const { stdout } = await run(ffprobe.path, ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', target]);
  const raw = JSON.parse(stdout) as { streams: RawStream[]; format: { duration: string; format_name: string } };
  const video = raw.streams.find((s) => s.codec_type === 'video');
  const audio = raw.streams.find((s) => s.codec_type === 'audio');
  return {
    duration: Number(raw.format.duration),
    formatName: raw.format.format_name,
    ...(video ? { video: { width: video.width ?? 0, height: video.height ?? 0, codec: video.codec_name, duration: Number(video.duration) } } : {}),
    ...(audio ? { audio: { codec: audio.codec_name, duration: Number(audio.duration) } } : {}),
  };
}

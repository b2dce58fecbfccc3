import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * Path of the ffmpeg binary shipped inside `@ffmpeg-installer/ffmpeg` (a CommonJS package, so
 * it is loaded with require). That build dates from 2018: the sandbox engine only ever hands it
 * frames the engine produced itself and lavfi sources, never user media.
 */
export function defaultFfmpegPath(): string {
  const installer: unknown = require('@ffmpeg-installer/ffmpeg');
  if (typeof installer === 'object' && installer !== null && 'path' in installer && typeof installer.path === 'string') {
    return installer.path;
  }
  throw new Error('@ffmpeg-installer/ffmpeg did not provide a binary path for this platform');
}

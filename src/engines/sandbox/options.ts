import type { FetchOptions } from '../../media/fetcher.js';
import type { FetchAllowList } from '../../outbound/address-policy.js';

export type SandboxLog = (msg: string, extra?: object) => void;

/** Options of the sandbox engine, resolved once by `resolveSandboxOptions`. */
export interface SandboxEngineOptions {
  /** ffmpeg binary. The app resolves it from MEDIAGATE_FFMPEG_PATH or `defaultFfmpegPath()`. */
  readonly ffmpegPath: string;
  /**
   * Limits for `https://` inputs: maxBytes (default 25 MiB), timeoutMs (default 20000),
   * maxRedirects (default 3) and the dispatcher (default: one the engine builds with
   * `createFetchDispatcher()` and closes in `close()`).
   */
  readonly fetch?: Omit<FetchOptions, 'signal'>;
  /**
   * Hosts and non-public ranges the engine's own dispatcher may reach (MEDIAGATE_FETCH_ALLOW_HOSTS,
   * MEDIAGATE_FETCH_ALLOW_PRIVATE). Default: public addresses only. Ignored when `fetch.dispatcher` is given.
   */
  readonly fetchAllow?: FetchAllowList;
  /** Font file for the prompt text. Default: the system sans-serif found by fontconfig (DejaVu). */
  readonly fontFile?: string;
  /** Longest one render may take, in ms; past it the task fails with `timeout`. Default 600000. */
  readonly renderTimeoutMs?: number;
  /** Video frame rate, an integer from 6 to 60. Default 12: half the encode work of 24, still smooth for a sandbox preview. */
  readonly fps?: number;
  /** Longest video rendered, in seconds; longer requests fail with `unsupported_value`. Default 120. */
  readonly maxDurationS?: number;
  /** Largest input image decoded, in pixels (decompression-bomb guard). Default 50 000 000. */
  readonly maxInputPixels?: number;
  /**
   * Pixels of user images decoded at once in this process, summed over every render (a
   * process-wide budget, pixel-budget.ts). An image larger than the budget decodes alone.
   * Default 50 000 000: the largest accepted image, about 200 MB decoded as 8-bit RGBA.
   */
  readonly decodePixelBudget?: number;
  /** Debug log: ffmpeg command lines, pids, stderr of failures. Default: silent. */
  readonly log?: SandboxLog;
  /** Directory of the content-addressed render cache (render-cache.ts). Default: no cache. */
  readonly cacheDir?: string;
}

export interface ResolvedSandboxOptions {
  readonly ffmpegPath: string;
  readonly fetch: Omit<FetchOptions, 'signal'>;
  readonly fetchAllow: FetchAllowList;
  readonly fontFile: string | undefined;
  readonly renderTimeoutMs: number;
  readonly fps: number;
  readonly maxDurationS: number;
  readonly maxInputPixels: number;
  readonly decodePixelBudget: number;
  readonly log: SandboxLog;
  readonly cacheDir: string | undefined;
}

/** Largest frame: each side at most 8192, and no more pixels than 7680x2160 (32:9 at 4k). */
export const MAX_FRAME_SIDE = 8192;
export const MAX_FRAME_PIXELS = 7680 * 2160;

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`sandbox engine option ${name} must be a positive number`);
  return value;
}

function frameRate(value: number | undefined): number {
  if (value === undefined) return 12;
  // Whole frames per second keep every duration an exact number of frames.
  if (!Number.isInteger(value) || value < 6 || value > 60) throw new RangeError('sandbox engine option fps must be an integer from 6 to 60');
  return value;
}

export function resolveSandboxOptions(options: SandboxEngineOptions): ResolvedSandboxOptions {
  if (options.ffmpegPath.trim() === '') throw new RangeError('sandbox engine option ffmpegPath is empty');
  return {
    ffmpegPath: options.ffmpegPath,
    fetch: options.fetch ?? {},
    fetchAllow: options.fetchAllow ?? {},
    fontFile: options.fontFile,
    renderTimeoutMs: positive('renderTimeoutMs', options.renderTimeoutMs, 600_000),
    fps: frameRate(options.fps),
    maxDurationS: positive('maxDurationS', options.maxDurationS, 120),
    maxInputPixels: Math.round(positive('maxInputPixels', options.maxInputPixels, 50_000_000)),
    decodePixelBudget: Math.max(1, Math.round(positive('decodePixelBudget', options.decodePixelBudget, 50_000_000))),
    log: options.log ?? (() => {}),
    cacheDir: options.cacheDir,
  };
}

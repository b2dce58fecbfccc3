import { choiceField, integerField, secondsField, type Field } from '../../config-fields.js';

/** Kept as given: a bare name is looked up on PATH. */
const ffmpegPath: Field<string | undefined> = {
  variable: 'MEDIAGATE_FFMPEG_PATH',
  about: 'ffmpeg binary; unset: the one shipped by @ffmpeg-installer/ffmpeg',
  default: undefined,
  unit: 'path',
  read: (env) => env['MEDIAGATE_FFMPEG_PATH']?.trim() || undefined,
};

/**
 * The tasks module's own settings (modules/tasks.ts): the engine and the stages of a render in
 * this process. The lease, attempts, concurrency, render timeout and retention are shared (the
 * task service, the files module's sweeper or the server read them too) and stay in config.ts.
 */
export const TASKS_SLICE = {
  engine: choiceField(
    'MEDIAGATE_ENGINE',
    '`sandbox` renders real media; `instant` is a zero-cost engine for benchmarks',
    ['sandbox', 'instant'] as const,
    'sandbox',
  ),
  ffmpegPath,
  sandboxFps: integerField('MEDIAGATE_SANDBOX_FPS', 'frame rate of sandbox videos', 'count', 12, 6, 60),
  decodePixelBudget: integerField(
    'MEDIAGATE_DECODE_PIXEL_BUDGET',
    'input-image pixels the sandbox decodes at once in this process, all renders together',
    'count',
    50_000_000,
    1,
    10_000_000_000,
  ),
  fetchConcurrency: integerField(
    'MEDIAGATE_FETCH_CONCURRENCY',
    'tasks this process holds in its fetch stage (`https://` inputs fetched before a render slot)',
    'count',
    8,
    1,
    1024,
  ),
  fetchPerKey: integerField('MEDIAGATE_FETCH_PER_KEY', 'of those, per API key; a key at it gets no more tasks claimed here meanwhile', 'count', 2, 1, 1024),
  storageRetryMs: secondsField('MEDIAGATE_STORAGE_RETRY_S', "how long a finished task's storage write is retried through a media store outage", 300, 0, 86_400),
  instantDelayMs: integerField('MEDIAGATE_INSTANT_DELAY_MS', 'how long each render of the `instant` engine takes (benchmarks, tests)', 'ms', 0, 0, 600_000),
  instantOutputBytes: integerField(
    'MEDIAGATE_INSTANT_OUTPUT_BYTES',
    'size of each `instant` video output at least (storage benchmarks and specs); 0: a header only',
    'bytes',
    0,
    0,
    4 * 1024 ** 3,
  ),
} as const;

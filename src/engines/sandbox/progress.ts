/**
 * Progress: ffmpeg's `-progress` key=value lines -> encoded seconds -> a percentage that only
 * rises, stays within 0..99 (the worker writes 100 on completion) and is reported at most a
 * few times a second.
 */

/**
 * Encoded time in microseconds from one `-progress` line, or null for other keys and for
 * `N/A` or negative values (ffmpeg prints those before the first frame is out).
 * `out_time_ms` is microseconds too, despite its name (kept that way by ffmpeg for
 * compatibility); newer builds add `out_time_us`.
 */
export function parseProgressLine(line: string): number | null {
  const eq = line.indexOf('=');
  if (eq < 0) return null;
  const key = line.slice(0, eq).trim();
  const value = line.slice(eq + 1).trim();
  if (key === 'out_time_us' || key === 'out_time_ms') {
    if (!/^\d+$/.test(value)) return null;
    return Number(value);
  }
  if (key === 'out_time') {
    const match = /^(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(value);
    if (!match) return null;
    return Math.round((Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3])) * 1e6);
  }
  return null;
}

/** Splits a byte stream into lines, handing each complete line to `onLine`. */
export function lineSplitter(onLine: (line: string) => void): (chunk: Buffer | string) => void {
  let pending = '';
  return (chunk) => {
    pending += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      onLine(pending.slice(0, newline).replace(/\r$/, ''));
      pending = pending.slice(newline + 1);
      newline = pending.indexOf('\n');
    }
  };
}

export interface ReporterOptions {
  /** Shortest gap between two reports, in ms. Default 250. */
  readonly minIntervalMs?: number;
  readonly now?: () => number;
}

/** Wraps a job's onProgress: integers only, never backwards, never above 99, throttled. */
export class ProgressReporter {
  private last = -1;
  private lastAt = Number.NEGATIVE_INFINITY;
  private readonly minIntervalMs: number;
  private readonly now: () => number;

  constructor(
    private readonly sink: (percent: number) => void,
    options: ReporterOptions = {},
  ) {
    this.minIntervalMs = options.minIntervalMs ?? 250;
    this.now = options.now ?? Date.now;
  }

  report(percent: number): void {
    const value = Math.min(99, Math.max(0, Math.floor(percent)));
    if (value <= this.last) return;
    const at = this.now();
    if (at - this.lastAt < this.minIntervalMs) return;
    this.last = value;
    this.lastAt = at;
    this.sink(value);
  }

  /** Reports `from + (to - from) * fraction`: a phase of the render mapped onto the whole. */
  phase(from: number, to: number, fraction: number): void {
    this.report(from + (to - from) * Math.min(1, Math.max(0, fraction)));
  }
}

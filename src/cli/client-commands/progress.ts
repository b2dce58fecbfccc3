import type { ProgressEvent } from '../../client/index.js';

/**
 * How a wait shows itself on stderr. On a terminal: one line redrawn in place (`\r`) with a bar,
 * the percentage, the status and the elapsed time, ticking even between polls. Otherwise: a plain
 * line per change of status or progress, so logs and pipes stay readable.
 */
export interface ProgressView {
  update(event: ProgressEvent): void;
  /** The wait ended; a terminal line is finished with a newline. */
  end(): void;
}

export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

const BAR_WIDTH = 24;
const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const TICK_MS = 200;

/** `m:ss`, or `h:mm:ss` from an hour. */
export function formatElapsed(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}

function percent(progress: number | null): string {
  return progress === null ? '  -%' : `${String(progress).padStart(3)}%`;
}

export function bar(progress: number | null, width = BAR_WIDTH): string {
  const filled = progress === null ? 0 : Math.round((Math.min(100, Math.max(0, progress)) / 100) * width);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}]`;
}

export function createProgressView(id: string, stream: ProgressStream = process.stderr, quiet = false): ProgressView {
  const started = Date.now();
  if (quiet) return { update() {}, end() {} };
  if (!stream.isTTY) {
    return {
      update(event) {
        stream.write(`${id} ${event.status} ${percent(event.progress).trim()} ${formatElapsed(Date.now() - started)}\n`);
      },
      end() {},
    };
  }
  let last: ProgressEvent | undefined;
  let frame = 0;
  const draw = (): void => {
    const status = last?.status ?? 'waiting';
    const final = status === 'completed' || status === 'failed' || status === 'cancelled';
    const spin = final ? (status === 'completed' ? '✔' : '✖') : (SPINNER[frame++ % SPINNER.length] ?? '');
    const progress = last?.progress ?? null;
    stream.write(`\r${spin} ${id} ${bar(progress)} ${percent(progress)}  ${status.padEnd(10)} ${formatElapsed(Date.now() - started)}\x1b[K`);
  };
  const ticker = setInterval(draw, TICK_MS);
  ticker.unref();
  draw();
  return {
    update(event) {
      last = event;
      draw();
    },
    end() {
      clearInterval(ticker);
      draw();
      stream.write('\n');
    },
  };
}

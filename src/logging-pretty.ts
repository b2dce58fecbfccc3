/**
 * LOG_FORMAT=pretty (the default when stdout is a terminal): the same lines as the JSON format,
 * after scrubbing, laid out for a person: `12:00:01.234 INFO  task completed task=... model=...`.
 * Written synchronously, like pino's own stdout, so the last line before an exit is not lost.
 * Written here rather than with pino-pretty: one small function, no worker thread, no dependency.
 */
import { writeSync } from 'node:fs';
import type { DestinationStream } from 'pino';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
/** Fields every line has, or that the layout already shows. */
const SKIP = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'err']);

function value(inner: unknown): string {
  if (typeof inner === 'string') return /^[^\s"=]+$/.test(inner) ? inner : JSON.stringify(inner);
  return JSON.stringify(inner) ?? String(inner);
}

/** One JSON log line as a readable line (and the error's stack, indented, below it). */
export function prettyLine(json: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const time = typeof record['time'] === 'number' ? new Date(record['time']).toISOString().slice(11, 23) : '';
  const level = typeof record['level'] === 'number' ? (LEVELS[record['level']] ?? String(record['level'])) : '';
  const fields = Object.entries(record)
    .filter(([key]) => !SKIP.has(key))
    .map(([key, inner]) => `${key}=${value(inner)}`);
  let out = [time, level, typeof record['msg'] === 'string' ? record['msg'] : '', ...fields].filter((part) => part !== '').join(' ');
  const err = record['err'];
  if (err !== null && typeof err === 'object') {
    const stack = (err as Record<string, unknown>)['stack'];
    out += `\n    ${typeof stack === 'string' ? stack.split('\n').join('\n    ') : JSON.stringify(err)}`;
  }
  return `${out}\n`;
}

/**
 * Once the reader is gone (EPIPE: the terminal closed, or `| tee` ended by Ctrl-C), lines are
 * dropped: a failing log write must not throw into the code that logged, nor stop a shutdown.
 */
export function prettyDestination(fd = 1): DestinationStream {
  let closed = false;
  return {
    write: (line: string) => {
      if (closed) return;
      try {
        writeSync(fd, prettyLine(line));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EPIPE') throw error;
        closed = true;
      }
    },
  };
}

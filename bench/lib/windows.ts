import { load, type LoadOptions, type LoadResult } from './load.js';
import { cpuMicros, type Served } from './proc.js';

/** One window of load, with the server's CPU (all its threads, from /proc) per request. */
export interface Window extends LoadResult {
  readonly cpuUs: number;
}

/** Loads `server` as `options` say; what the window cost the server per request (0 when none was answered). */
export async function cpuWindow(server: Served, options: LoadOptions): Promise<Window> {
  const before = await cpuMicros(server.child.pid);
  const result = await load(options);
  const used = (await cpuMicros(server.child.pid)) - before;
  return { ...result, cpuUs: result.requests === 0 ? 0 : used / result.requests };
}

/** The middle value (the upper one of an even count); 0 for none. */
export const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** A phase's windows, and each one's ratio to the ceiling's window just before it (ceiling µs over the phase's). */
export interface PairedWindows {
  readonly windows: readonly Window[];
  readonly ceilingUs: readonly number[];
  readonly ratios: readonly number[];
}

/**
 * `count` windows of `options` on `server`, each right after a window of the same length on
 * `ceiling` (a GET of `/`, the same connections): this machine's speed drifts by a third within
 * minutes, and a ratio of two windows a second apart does not see that drift where a ratio to a
 * ceiling measured minutes before does. A window that answered nothing has no ratio.
 */
export async function pairedWindows(ceiling: Served, server: Served, options: LoadOptions, count: number): Promise<PairedWindows> {
  const windows: Window[] = [];
  const ceilingUs: number[] = [];
  const ratios: number[] = [];
  for (let pair = 0; pair < count; pair += 1) {
    const bare = await cpuWindow(ceiling, { url: `${ceiling.url}/`, connections: options.connections, durationS: options.durationS });
    const measured = await cpuWindow(server, options);
    windows.push(measured);
    ceilingUs.push(bare.cpuUs);
    if (measured.cpuUs > 0) ratios.push(bare.cpuUs / measured.cpuUs);
  }
  return { windows, ceilingUs, ratios };
}

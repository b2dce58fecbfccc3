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

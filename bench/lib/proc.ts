import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { freePort } from '../../test/helpers/process.js';

export { freePort };

export interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts a server process and waits until `probePath` answers. */
export async function serve(command: string, args: readonly string[], env: Record<string, string>, probePath: string): Promise<Served> {
  const port = await freePort();
  const child = spawn(command, args, { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${url}${probePath}`)).status < 500) break;
    } catch {
      // not yet listening
    }
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    child,
    url,
    stop: () => stopChild(child),
  };
}

/**
 * The ceiling's server (bench/ceiling-server.ts: bare node:http, a fixed JSON answer); `env` may
 * set BENCH_WORK_US, the CPU it spins per request before answering.
 */
export function serveCeiling(env: Record<string, string> = {}): Promise<Served> {
  return serve(process.execPath, ['--import', 'tsx', 'bench/ceiling-server.ts'], env, '/');
}

/** Resident memory of a process in MiB (Linux /proc). */
export async function rssMiB(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return Math.round((kb / 1024) * 10) / 10;
  } catch {
    return 0;
  }
}

/** CPU time a process has used so far (user + system, all its threads), in microseconds (Linux /proc). */
export async function cpuMicros(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  try {
    // Fields after the command name: utime and stime are the 12th and 13th, in clock ticks (100 Hz).
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return 0;
  }
}

/** SIGTERM, up to 15 s to drain, then SIGKILL. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

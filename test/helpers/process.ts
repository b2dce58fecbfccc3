import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from './eventually.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * `mediagate` as built (`node dist/cli/main.js`), which the specs run as child processes; dist/ is
 * rebuilt before a run when src/ is newer (test/setup/dist-build.ts).
 */
export const CLI = join(ROOT, 'dist', 'cli', 'main.js');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
  /** Resolves with the exit code or signal. */
  exited: Promise<number | string>;
}

/** Runs `mediagate <args>` as a child process, as an operator would run it. */
export async function startProcess(args: readonly string[], env: Record<string, string>): Promise<ServiceProcess> {
  const url = `http://127.0.0.1:${env['PORT'] ?? '8080'}`;
  return spawnService(args, env, url, async () => {
    try {
      return (await fetch(`${url}/healthz`)).ok;
    } catch {
      return false; // not listening yet
    }
  });
}

/** Runs `mediagate worker` (no HTTP; `url` is empty) and resolves once it takes work. */
export async function startWorkerProcess(env: Record<string, string>): Promise<ServiceProcess> {
  return spawnService(['worker'], env, '', (output) => Promise.resolve(output.includes('"mediagate worker started"')));
}

async function spawnService(
  args: readonly string[],
  env: Record<string, string>,
  url: string,
  ready: (output: string) => Promise<boolean>,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // Every chunk of output and the exit wake the readiness check at once.
  const changed = new EventEmitter();
  const append = (chunk: Buffer): void => {
    output += chunk.toString();
    changed.emit('change');
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  child.on('exit', () => changed.emit('change'));
  const state = await eventually(async () => (child.exitCode !== null || child.signalCode !== null ? 'exited' : (await ready(output)) && 'ready'), {
    deadline: 30_000,
    interval: 100,
    what: 'the service to start',
    wake: { emitter: changed },
  }).catch(() => 'timed out');
  if (state !== 'ready') {
    child.kill('SIGKILL');
    throw new Error(`service did not start (${state}):\n${output}`);
  }
  return { child, url, output: () => output, exited };
}

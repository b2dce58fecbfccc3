import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

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

/** Runs `mediagate <args>` from the sources as a child process, as an operator would run it. */
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
  return spawnService(['worker'], env, '', async (output) => output.includes('"mediagate worker started"'));
}

async function spawnService(
  args: readonly string[],
  env: Record<string, string>,
  url: string,
  ready: (output: string) => Promise<boolean>,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const deadline = Date.now() + 30_000;
  while (!(await ready(output))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, url, output: () => output, exited };
}

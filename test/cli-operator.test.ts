/**
 * The operator's first-run edges: `--version`, a taken port, `keys list` without a
 * store, the keys table, the 0.0.0.0 warning, and `npm start` (the README's command) stopping
 * cleanly on SIGTERM sent to the very process it started.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTable } from '../src/cli/keys.js';
import { eventually } from './helpers/eventually.js';
import { CLI, freePort, startProcess } from './helpers/process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const KEY = 'operator-test-key-0123456789';

interface Ran {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number;
}

/** `mediagate <args>` as built (dist/), in `cwd`, with exactly `env` on top of PATH and HOME. */
async function mediagate(args: readonly string[], env: Record<string, string>, cwd = ROOT): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd, env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ stdout, stderr, code: error ? (typeof error.code === 'number' ? error.code : 1) : 0 }),
    );
  });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediagate-operator-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('mediagate --version', () => {
  it("prints package.json's version and exits 0", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const ran = await mediagate(['--version'], {});
    expect(ran).toMatchObject({ code: 0, stdout: `${version}\n` });
  });
});

describe('a port already in use', () => {
  let taken: Server;
  let port = 0;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const address = taken.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  afterAll(async () => new Promise<void>((resolve) => taken.close(() => resolve())));

  it('is said in one line, before any key or database is made, with a non-zero exit', async () => {
    const dataDir = join(dir, 'taken');
    const ran = await mediagate(['serve'], { PORT: String(port), MEDIAGATE_DATA_DIR: dataDir });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toBe(`mediagate: port ${port} on 127.0.0.1 is already in use (EADDRINUSE): stop what listens there, or set PORT to another port\n`);
    expect(ran.stdout, 'no key was printed').not.toContain('mg_');
    expect(existsSync(join(dataDir, 'mediagate.db')), 'no database was created').toBe(false);
  });
});

describe('mediagate keys list', () => {
  it('without MEDIAGATE_DATA_DIR and no ./data: says which store it looked for, creates none, exits 1', async () => {
    const cwd = await mkdtemp(join(dir, 'empty-'));
    const ran = await mediagate(['keys', 'list'], {}, cwd);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`no key store at ${join(cwd, 'data', 'mediagate.db')}`);
    expect(ran.stderr.trim().split('\n')).toHaveLength(1);
    expect(await readdir(cwd), 'nothing was created').toEqual([]);
  });

  it('names the store it read, and keeps its columns aligned once a key is revoked', async () => {
    const dataDir = join(dir, 'keys');
    const env = { MEDIAGATE_DATA_DIR: dataDir };
    const first = await mediagate(['keys', 'create', '--name', 'ci', '--json'], env);
    const second = await mediagate(['keys', 'create', '--name', 'a much longer name', '--json'], env);
    const id = (JSON.parse(first.stdout) as { id: string }).id;
    expect(second.code).toBe(0);
    expect((await mediagate(['keys', 'revoke', id], env)).code).toBe(0);
    const ran = await mediagate(['keys', 'list'], env);
    expect(ran.code).toBe(0);
    expect(ran.stderr).toBe(`store: SQLite ${join(dataDir, 'mediagate.db')}\n`);
    const lines = ran.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines.some((line) => / revoked \d{4}-/.test(line))).toBe(true);
    // Every column starts where its header starts.
    const header = lines[0] ?? '';
    for (const column of ['status', 'created', 'name']) {
      const at = header.indexOf(column);
      for (const line of lines.slice(1)) expect(line[at - 1], `${column} in ${JSON.stringify(line)}`).toBe(' ');
      for (const line of lines.slice(1)) expect(line[at], `${column} in ${JSON.stringify(line)}`).not.toBe(' ');
    }
  });

  it('formatTable pads every column but the last to its widest cell', () => {
    expect(
      formatTable([
        ['id', 'status', 'name'],
        ['k1', 'revoked 2026-01-01T00:00:00Z', 'x'],
        ['k2', 'active', 'y'],
      ]),
    ).toBe(['id  status                        name', 'k1  revoked 2026-01-01T00:00:00Z  x', 'k2  active                        y'].join('\n'));
  });
});

describe('HOST=0.0.0.0', () => {
  it('without MEDIAGATE_PUBLIC_URL warns that output URLs point at 127.0.0.1; with it, does not', async () => {
    for (const publicUrl of [undefined, 'http://media.example:9000']) {
      const env: Record<string, string> = {
        HOST: '0.0.0.0',
        PORT: String(await freePort()),
        MEDIAGATE_DATA_DIR: join(dir, 'wide'),
        MEDIAGATE_API_KEYS: KEY,
        MEDIAGATE_CONCURRENCY: '1',
      };
      if (publicUrl) env['MEDIAGATE_PUBLIC_URL'] = publicUrl;
      const service = await startProcess(['serve'], env);
      await eventually(() => service.output().includes('"mediagate listening"'), { deadline: 10_000, what: 'the "mediagate listening" line' });
      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
      const warned = service.output().includes('set MEDIAGATE_PUBLIC_URL');
      expect(warned, service.output()).toBe(publicUrl === undefined);
    }
  });
});

describe('npm start (the README command) under a process manager', () => {
  it('SIGTERM to the npm process drains, stops the server, logs "mediagate stopped" last and exits 0', async () => {
    const port = await freePort();
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        MEDIAGATE_DATA_DIR: join(dir, 'npm-start'),
        MEDIAGATE_API_KEYS: KEY,
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'info',
        MEDIAGATE_CONCURRENCY: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | string>((resolve) => npm.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
    const started = await eventually(() => (npm.exitCode !== null ? 'exited' : output.includes('"mediagate listening"') && 'listening'), {
      deadline: 30_000,
      what: 'npm start to listen',
    }).catch(() => 'timed out');
    if (started !== 'listening') throw new Error(`npm start did not start (${started}):\n${output}`);
    const logLines = (): Record<string, unknown>[] =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const serverPid = logLines().find((line) => line['msg'] === 'mediagate listening')?.['pid'];
    expect(serverPid).toEqual(expect.any(Number));
    expect(serverPid, 'the server is a process of its own').not.toBe(npm.pid);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).ok).toBe(true);

    npm.kill('SIGTERM');
    const code = await exited;
    // A server left behind by a failure here must not outlive the test.
    if (code !== 0) process.kill(serverPid as number, 'SIGKILL');
    expect(code, output).toBe(0);
    const last = logLines().at(-1);
    expect(last, output).toMatchObject({ msg: 'mediagate stopped', signal: 'SIGTERM', pid: serverPid });
    // The server is gone, not orphaned: its pid no longer exists, and the port is free.
    expect(() => process.kill(serverPid as number, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });
});

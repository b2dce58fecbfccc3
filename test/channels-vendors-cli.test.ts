// `mediagate channels check [--probe]` with kling, runway, luma and xai channels, the CLI run as a child
// process against the fakes: the table names the variables (never a key), --probe makes one
// authenticated call each (Kling's with a token signed from the two keys), and a kling channel
// missing its secret key stops the check with exit 78 and the JSON path.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKlingFake, type KlingFake } from './fakes/kling.js';
import { startLumaFake, type LumaFake } from './fakes/luma.js';
import { startRunwayFake, type RunwayFake } from './fakes/runway.js';
import { startXaiFake, type XaiFake } from './fakes/xai.js';
import { CLI } from './helpers/process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ACCESS = 'kling-cli-access';
const SECRET = 'kling-cli-secret';
const RUNWAY_KEY = 'runway-cli-key';

interface Ran {
  stdout: string;
  stderr: string;
  code: number;
}

function run(args: readonly string[], env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ stdout, stderr, code: error ? (typeof error.code === 'number' ? error.code : 1) : 0 }),
    );
  });
}

describe('channels check with kling, runway, luma and xai', () => {
  let kling: KlingFake;
  let runway: RunwayFake;
  let luma: LumaFake;
  let xai: XaiFake;
  let dir: string;
  let file: string;

  beforeAll(async () => {
    kling = await startKlingFake({ accessKey: ACCESS, secretKey: SECRET });
    runway = await startRunwayFake({ apiKey: RUNWAY_KEY });
    luma = await startLumaFake({ apiKey: 'luma-cli-key' });
    xai = await startXaiFake({ apiKey: 'xai-cli-key' });
    dir = await mkdtemp(join(tmpdir(), 'mg-vendors-cli-'));
    file = join(dir, 'channels.json');
    await writeFile(
      file,
      JSON.stringify({
        channels: {
          kling: { protocol: 'kling', base_url: kling.origin, access_key_env: 'K_AK', secret_key_env: 'K_SK' },
          runway: { protocol: 'runway', base_url: runway.origin, api_key_env: 'R_KEY' },
          luma: { protocol: 'luma', base_url: luma.origin, api_key_env: 'L_KEY' },
          grok: { protocol: 'xai', base_url: xai.origin, api_key_env: 'X_KEY' },
        },
        routes: [
          { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'kling', upstream_model: 'kling-v3' }] },
          { model: 'famw-3-0-prime-image-to-video', to: [{ channel: 'runway', upstream_model: 'gen4.5' }] },
        ],
      }),
    );
  });
  afterAll(async () => {
    await kling?.close();
    await runway?.close();
    await luma?.close();
    await xai?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('--probe: one authenticated call each, both ok; no key printed', async () => {
    const before = { kling: kling.http.stats.requests, runway: runway.http.stats.requests };
    const ran = await run(['channels', 'check', '--probe'], {
      MEDIAGATE_CHANNELS_FILE: file,
      K_AK: ACCESS,
      K_SK: SECRET,
      R_KEY: RUNWAY_KEY,
      L_KEY: 'luma-cli-key',
      X_KEY: 'xai-cli-key',
    });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/kling\s+kling\s+http:\/\/127\.0\.0\.1:\d+\s+K_AK\s+/);
    expect(ran.stdout).toMatch(/\nkling\s+ok\s+\d+\s+task list/);
    expect(ran.stdout).toMatch(/\nrunway\s+ok\s+\d+\s+organization/);
    expect(ran.stdout).toMatch(/\nluma\s+ok\s+\d+\s+credits/);
    expect(ran.stdout).toMatch(/\ngrok\s+ok\s+\d+\s+api key/);
    expect(kling.http.stats.requests - before.kling).toBe(1);
    expect(runway.http.stats.requests - before.runway).toBe(1);
    for (const secret of [ACCESS, SECRET, RUNWAY_KEY]) expect(ran.stdout + ran.stderr).not.toContain(secret);
  });

  it('--probe with a wrong Kling secret: that channel FAILED (code 1002), exit 1', async () => {
    const ran = await run(['channels', 'check', '--probe'], {
      MEDIAGATE_CHANNELS_FILE: file,
      K_AK: ACCESS,
      K_SK: 'wrong',
      R_KEY: RUNWAY_KEY,
      L_KEY: 'luma-cli-key',
      X_KEY: 'xai-cli-key',
    });
    expect(ran.code).toBe(1);
    expect(ran.stdout).toMatch(/\nkling\s+FAILED\s+\d+\s+HTTP 401 code 1002/);
    expect(ran.stdout).toMatch(/\nrunway\s+ok\s+/);
  });

  it('a kling channel whose secret key variable is not set stops the check with exit 78 and the JSON path', async () => {
    const ran = await run(['channels', 'check'], {
      MEDIAGATE_CHANNELS_FILE: file,
      K_AK: ACCESS,
      R_KEY: RUNWAY_KEY,
      L_KEY: 'luma-cli-key',
      X_KEY: 'xai-cli-key',
    });
    expect(ran.code).toBe(78);
    expect(ran.stderr).toContain('channels.kling.secret_key_env: the environment variable K_SK is not set');
  });
});

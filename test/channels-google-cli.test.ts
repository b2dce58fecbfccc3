// `mediagate channels check [--probe]` with a gemini and a vertex channel, the CLI run as a child
// process against the fakes: the table names the variables (never a key or the key file's
// contents), and --probe makes one authenticated call each (vertex after its token grant).
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGeminiFake, type GeminiFake } from './fakes/gemini.js';
import { startVertexFake, type VertexFake } from './fakes/vertex.js';
import { CLI } from './helpers/process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EMAIL = 'probe@mediagate-probe.iam.gserviceaccount.com';
const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

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

describe('channels check with the Google protocols', () => {
  let gemini: GeminiFake;
  let vertex: VertexFake;
  let dir: string;
  let file: string;
  let keyFile: string;

  beforeAll(async () => {
    gemini = await startGeminiFake({ apiKey: 'AIza-good' });
    vertex = await startVertexFake({ project: 'probe-project', location: 'us-central1', clientEmail: EMAIL, publicKey: pair.publicKey });
    dir = await mkdtemp(join(tmpdir(), 'mg-google-cli-'));
    keyFile = join(dir, 'sa.json');
    await writeFile(keyFile, JSON.stringify({ type: 'service_account', client_email: EMAIL, private_key: PEM, token_uri: vertex.tokenUri }));
    file = join(dir, 'channels.json');
    await writeFile(
      file,
      JSON.stringify({
        channels: {
          veo: { protocol: 'gemini', base_url: gemini.origin, api_key_env: 'G_KEY' },
          'veo-vertex': { protocol: 'vertex', base_url: vertex.origin, project: 'probe-project', location: 'us-central1', credentials_file_env: 'V_KEY_FILE' },
        },
        routes: [
          {
            model: 'vendora/famw-3.0-i2v-spicy',
            to: [
              { channel: 'veo', upstream_model: 'veo-3.1-generate-preview' },
              { channel: 'veo-vertex', upstream_model: 'veo-3.1-generate-001' },
            ],
          },
        ],
      }),
    );
  });
  afterAll(async () => {
    await gemini?.close();
    await vertex?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('--probe: one authenticated call each (vertex after one token grant), both ok; no secret printed', async () => {
    const before = { gemini: gemini.http.stats.requests, grants: vertex.grants.ok, vertex: vertex.http.stats.requests };
    const ran = await run(['channels', 'check', '--probe'], { MEDIAGATE_CHANNELS_FILE: file, G_KEY: 'AIza-good', V_KEY_FILE: keyFile });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/veo-vertex\s+vertex\s+http:\/\/127\.0\.0\.1:\d+\s+V_KEY_FILE\s+/);
    expect(ran.stdout).toMatch(/\nveo\s+ok\s+\d+\s+model models\/veo-3\.1-generate-preview/);
    expect(ran.stdout).toMatch(/\nveo-vertex\s+ok\s+\d+\s+project probe-project in us-central1/);
    expect(gemini.http.stats.requests - before.gemini).toBe(1);
    expect(vertex.grants.ok - before.grants).toBe(1);
    // The grant and the operations list.
    expect(vertex.http.stats.requests - before.vertex).toBe(2);
    expect(ran.stdout + ran.stderr).not.toContain('AIza-good');
    expect(ran.stdout + ran.stderr).not.toContain('PRIVATE KEY');
  });

  it('--probe with a wrong Gemini key: that channel FAILED, exit 1', async () => {
    const ran = await run(['channels', 'check', '--probe'], { MEDIAGATE_CHANNELS_FILE: file, G_KEY: 'AIza-wrong', V_KEY_FILE: keyFile });
    expect(ran.code).toBe(1);
    expect(ran.stdout).toMatch(/\nveo\s+FAILED\s+\d+\s+HTTP 400/);
    expect(ran.stdout).toMatch(/\nveo-vertex\s+ok\s+/);
    expect(ran.stdout + ran.stderr).not.toContain('AIza-wrong');
  });

  it('a key file that is not a service-account key stops the check with exit 78 and the JSON path', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{"type":"authorized_user"}');
    const ran = await run(['channels', 'check'], { MEDIAGATE_CHANNELS_FILE: file, G_KEY: 'AIza-good', V_KEY_FILE: bad });
    expect(ran.code).toBe(78);
    expect(ran.stderr).toContain('channels.veo-vertex.credentials_file_env: the file named by V_KEY_FILE is not a service-account key');
  });
});

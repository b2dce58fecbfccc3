/**
 * The light client package (packages/client, `@mediagate/client`): built from the
 * client's one source, packed with `npm pack`, installed from the tarball into an empty directory
 * with the network off. It must declare no dependency, install as exactly one package, and work
 * there in plain Node.js: the SDK imported by its package name, and the `mediagate-client` bin
 * talking to a server with the task operations.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTaskOperationsStub, type TaskOperationsStub } from './helpers/task-operations-stub.js';

const run = promisify(execFile);
const PACKAGE = fileURLToPath(new URL('../packages/client', import.meta.url));

let work: string;
let app: string;
let stub: TaskOperationsStub;

async function sizeOf(path: string): Promise<number> {
  const info = await stat(path);
  if (!info.isDirectory()) return info.size;
  let total = 0;
  for (const entry of await readdir(path)) total += await sizeOf(join(path, entry));
  return total;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'mediagate-client-package-'));
  app = join(work, 'app');
  await mkdir(app);
  await writeFile(join(app, 'package.json'), '{"name":"app","private":true,"type":"module"}\n');
  stub = await startTaskOperationsStub();
  // packages/client/dist is built from the sources as they are before any spec starts (test/setup/dist-build.ts).
});

afterAll(async () => {
  await stub?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('@mediagate/client', () => {
  let tarball = '';

  it('packs with no dependency of any kind', async () => {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: PACKAGE });
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; size: number; unpackedSize: number; files: { path: string }[] }[];
    if (!packed) throw new Error('npm pack printed nothing');
    tarball = join(work, packed.filename);
    const manifest = JSON.parse(await readFile(join(PACKAGE, 'package.json'), 'utf8')) as Record<string, unknown>;
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies', 'bundleDependencies', 'bundledDependencies']) {
      expect(manifest[field], field).toBeUndefined();
    }
    const files = packed.files.map((file) => file.path);
    expect(files).toContain('dist/client/index.js');
    expect(files).toContain('dist/client/index.d.ts');
    expect(files).toContain('dist/cli/bin.cjs');
    expect(files.some((file) => file.endsWith('.map') || file.startsWith('src/'))).toBe(false);
    // Measured 2026-11-23: 80 kB packed, 347 kB unpacked; a bound, so growth is noticed.
    expect(packed.size).toBeLessThan(200_000);
  });

  it('installs from the tarball offline as one package, and the SDK and the bin work from it', async () => {
    await run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: app });
    const modules = join(app, 'node_modules');
    const installed = (await readdir(modules)).filter((name) => !name.startsWith('.'));
    expect(installed).toEqual(['@mediagate']);
    expect(await readdir(join(modules, '@mediagate'))).toEqual(['client']);
    expect(await sizeOf(join(modules, '@mediagate', 'client'))).toBeLessThan(1_000_000);

    const id = stub.seed('video', 'vendora/famw-2.7-t2v', 'completed');
    const env = { ...process.env, MEDIAGATE_BASE_URL: stub.url, MEDIAGATE_API_KEY: stub.apiKey };
    const script = `
      import { Mediagate, verifyWebhook, WebhookVerificationError } from '@mediagate/client';
      const client = new Mediagate();
      const ids = [];
      for await (const task of await client.videos.list({ limit: 1 })) ids.push(task.id);
      let refused = '';
      try { verifyWebhook('{}', {}, 'whsec_AAAA'); } catch (error) { refused = error instanceof WebhookVerificationError ? error.code : 'other'; }
      console.log(JSON.stringify({ ids, refused }));
    `;
    await writeFile(join(app, 'check.mjs'), script);
    const sdk = await run(process.execPath, ['check.mjs'], { cwd: app, env });
    expect(JSON.parse(sdk.stdout)).toEqual({ ids: [id], refused: 'missing_header' });

    const bin = join(modules, '.bin', 'mediagate-client');
    const listed = await run(bin, ['task', 'get', id, '--json'], { cwd: app, env });
    expect(JSON.parse(listed.stdout)).toMatchObject({ id, status: 'completed' });
  });
});

/**
 * `mediagate/client` must not depend on the server code at run time. This spec compiles
 * src/client alone (rootDir src/client, so any import reaching outside is a compile error), checks
 * that the emitted JavaScript imports nothing but its own files and `node:` built-ins, and runs
 * the emitted SDK in a plain Node.js process (no tsx) against a real server.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './helpers/server.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

let outDir: string;
let server: TestServer;

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'mediagate-client-build-'));
  server = await startServer();
});

afterAll(async () => {
  await server?.close();
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

describe('the client SDK on its own', () => {
  it('compiles from src/client alone and imports only its own files and node: built-ins', async () => {
    const args = [
      TSC,
      join(ROOT, 'src/client/index.ts'),
      '--rootDir',
      join(ROOT, 'src/client'),
      '--outDir',
      outDir,
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--lib',
      'es2023',
      '--types',
      'node',
      '--strict',
      '--declaration',
      '--skipLibCheck',
    ];
    const result = await run(process.execPath, args, { cwd: ROOT }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`tsc failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
    });
    expect(result.stderr).toBe('');
    await writeFile(join(outDir, 'package.json'), '{"type":"module"}\n');

    const files = (await readdir(outDir)).filter((name) => name.endsWith('.js'));
    expect(files).toContain('index.js');
    for (const file of files) {
      const text = await readFile(join(outDir, file), 'utf8');
      const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((match) => match[1] ?? '');
      for (const specifier of specifiers) {
        expect(specifier.startsWith('./') || specifier.startsWith('node:'), `${file} imports ${specifier}`).toBe(true);
      }
    }
  });

  it('runs in plain Node.js against a real server', async () => {
    const script = `
      import { Mediagate, NotFoundError } from ${JSON.stringify(join(outDir, 'index.js'))};
      const client = new Mediagate();
      const models = await client.models.list();
      const task = await client.images.createAndWait(
        { model: 'vendora/famz-image-spicy-pro', prompt: 'a lighthouse', size: '256x256' },
        { pollInterval: 100 },
      );
      let notFound = false;
      try { await client.videos.get(task.task_id); } catch (error) { notFound = error instanceof NotFoundError; }
      console.log(JSON.stringify({ models: models.length, status: task.status, outputs: task.outputs.length, notFound }));
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, MEDIAGATE_BASE_URL: server.url, MEDIAGATE_API_KEY: server.keys[0] },
    });
    expect(JSON.parse(stdout)).toEqual({ models: 23, status: 'SUCCESS', outputs: 1, notFound: true });
  });
});

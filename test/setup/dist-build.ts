import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Vitest's global setup for what the specs run as built, built again once per run, before any spec
 * starts, when a source is newer (`npm ci` builds both: the prepare script):
 *
 * - dist/: the specs run the CLI as an operator does, `node dist/cli/main.js`, not the sources
 *   through tsx (whose loader costs about half a second of start per command, hundreds of
 *   commands a run);
 * - packages/client/dist: `@mediagate/client` as packed and installed (client-package), and as
 *   imported by the documented examples' type check (types/typecheck) and the README's install
 *   (readme-install). Built here rather than by one of them, since the build empties the directory
 *   first: a spec reading it while another rebuilt it would find no package;
 * - dist/console: the web console's bundle, which the server serves and the console's browser
 *   specs drive (scripts/build-console.mjs swaps a new build in whole).
 */
const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

function newest(path: string): number {
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  let found = info.mtimeMs;
  for (const entry of readdirSync(path)) found = Math.max(found, newest(join(path, entry)));
  return found;
}

function stale(built: string, sources: readonly string[]): boolean {
  return !existsSync(built) || statSync(built).mtimeMs < Math.max(...sources.map((source) => newest(join(ROOT, source))));
}

export default async function setup(): Promise<void> {
  const builds: Promise<unknown>[] = [];
  if (stale(join(ROOT, 'dist', 'cli', 'main.js'), ['src', 'tsconfig.json', 'tsconfig.build.json']))
    builds.push(run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT }));
  // The bin (bundled by esbuild) is the build's last output.
  const client = join(ROOT, 'packages', 'client');
  if (stale(join(client, 'dist', 'cli', 'bin.cjs'), ['src', 'tsconfig.json', 'packages/client/build.mjs', 'packages/client/tsconfig.json']))
    builds.push(run(process.execPath, [join(client, 'build.mjs')], { cwd: client }));
  if (stale(join(ROOT, 'dist', 'console', 'index.html'), ['console', 'scripts/build-console.mjs']))
    builds.push(run(process.execPath, [join(ROOT, 'scripts', 'build-console.mjs')], { cwd: ROOT }));
  await Promise.all(builds);
}

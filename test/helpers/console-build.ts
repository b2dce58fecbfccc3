import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const BUILT = join(ROOT, 'dist', 'console', 'index.html');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * The console the server serves is dist/console (built by `npm run build`, so by `npm ci`).
 * The specs build it again when console/ is newer, so they test the sources as they are.
 */
export async function ensureConsoleBuilt(): Promise<void> {
  if (existsSync(BUILT) && statSync(BUILT).mtimeMs >= newestSource(join(ROOT, 'console'))) return;
  await run(process.execPath, [join(ROOT, 'scripts', 'build-console.mjs')]);
}

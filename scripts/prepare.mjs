// `npm ci` and `npm install` in a checkout run `prepare`: it builds dist/ (the server, the console,
// packages/client) with the development tools. A production install (`npm ci --omit=dev`, or
// NODE_ENV=production, which npm also reads as --omit=dev) has no such tools: it runs the dist/
// built before it (the image's build stage, a copy of a built tree), so it builds nothing, and
// stops with what to do when there is no dist/ to run.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const omitted = (process.env.npm_config_omit ?? '').split(/[\s,]+/);
const production = omitted.includes('dev') || process.env.NODE_ENV === 'production';

if (!production) {
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
} else if (existsSync(join(root, 'dist', 'cli', 'main.js'))) {
  console.log('mediagate: production install: using the dist/ already built (nothing to compile).');
} else {
  console.error(
    'mediagate: production install without dist/: build it first where the development tools are ' +
      '(`npm ci && npm run build`), then copy dist/ here, or install a release tarball (`npm pack`). ' +
      'See docs/operations/install.md.',
  );
  process.exit(1);
}

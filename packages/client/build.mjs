/**
 * Builds @mediagate/client from the one source of the client (src/client, src/cli/client-commands):
 * the SDK compiled by tsc (JavaScript and declarations, importing only its own files and node:
 * built-ins), and the `mediagate-client` bin bundled by esbuild into one CommonJS file, commander
 * inlined, so the package has no runtime dependency at all.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
rmSync(join(here, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });
const { build } = await import('esbuild');
await build({
  entryPoints: [join(here, '../../src/cli/client-commands/bin.ts')],
  outfile: join(here, 'dist/cli/bin.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  legalComments: 'inline',
  logLevel: 'warning',
});

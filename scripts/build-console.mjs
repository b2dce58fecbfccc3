// Builds the web console (console/) into dist/console: one bundled, minified script and one
// stylesheet with content hashes in their names (served immutable), and the page that names
// them (served no-cache). Run by `npm run build`, hence by `npm ci` (prepare).
import { build } from 'esbuild';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = process.argv[2] ?? join(root, 'dist', 'console');
// Built beside the target and swapped in, so a server starting meanwhile sees one build or the other.
const out = `${target}.tmp-${process.pid}`;
await rm(out, { recursive: true, force: true });
await mkdir(join(out, 'assets'), { recursive: true });
const result = await build({
  entryPoints: {
    app: join(root, 'console', 'src', 'main.ts'),
    style: join(root, 'console', 'src', 'styles.css'),
  },
  bundle: true,
  minify: true,
  sourcemap: false,
  format: 'esm',
  target: ['chrome111', 'firefox111', 'safari16.4'],
  entryNames: '[name]-[hash]',
  outdir: join(out, 'assets'),
  metafile: true,
  logLevel: 'warning',
});
const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
const script = outputs.find((name) => name.startsWith('app-') && name.endsWith('.js'));
const style = outputs.find((name) => name.startsWith('style-') && name.endsWith('.css'));
if (!script || !style) throw new Error(`console build: missing outputs in ${outputs.join(', ')}`);
const page = (await readFile(join(root, 'console', 'index.html'), 'utf8'))
  .replace('__SCRIPT__', `/console/assets/${script}`)
  .replace('__STYLE__', `/console/assets/${style}`);
await writeFile(join(out, 'index.html'), page);
await rm(target, { recursive: true, force: true });
await rename(out, target);
console.log(`console built: ${target} (${script}, ${style})`);

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { errors } from '../../errors.js';
import { pathParam, type Handler } from '../route.js';
import { INIT_SCRIPT, STYLE } from './own-assets.js';

/**
 * `GET /docs/assets/<name>`: Swagger UI's script and stylesheet, read from the installed
 * swagger-ui-dist package (an exact-version dependency, docs/dependencies.md), and mediagate's
 * own start script and rules. Nothing of the page comes from another origin, so /docs works
 * offline. The page names each file with the package's version (`?v=`), so a file can be
 * cached for a year: an upgrade changes its URL.
 */

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

interface Asset {
  readonly type: string;
  readonly body: Buffer;
}

const packageDir = (): string => dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The version of the renderer, for the page's asset URLs. */
export function rendererVersion(): string {
  const manifest = JSON.parse(readFileSync(join(packageDir(), 'package.json'), 'utf8')) as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : '0';
}

function loadAssets(): ReadonlyMap<string, Asset> {
  const dir = packageDir();
  return new Map<string, Asset>([
    ['swagger-ui-bundle.js', { type: JS, body: readFileSync(join(dir, 'swagger-ui-bundle.js')) }],
    ['swagger-ui.css', { type: CSS, body: readFileSync(join(dir, 'swagger-ui.css')) }],
    ['init.js', { type: JS, body: Buffer.from(INIT_SCRIPT) }],
    ['docs.css', { type: CSS, body: Buffer.from(STYLE) }],
  ]);
}

export function getDocsAsset(): Handler {
  const assets = loadAssets();
  return async (request, reply) => {
    const name = pathParam(request, 'name');
    const asset = assets.get(name);
    if (!asset) throw errors.assetNotFound(name);
    return reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('cross-origin-resource-policy', 'same-origin')
      .type(asset.type)
      .send(asset.body);
  };
}

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { errors } from '../../errors.js';
import type { ModelRow } from '../../catalog/index.js';
import { consoleHints } from './console-hints.js';
import { pathParam, type Handler, type RouteDeps } from '../route.js';

/**
 * The web console (console/ in the repository), built by `npm run build` into dist/console:
 * `/console` is its page, `/console/assets/<name>-<hash>.<ext>` its scripts and styles, and `/`
 * points there. Hashed assets never change, so they are cached for a year; the page is
 * revalidated every time so a new build is picked up at once. The page runs no inline script:
 * its CSP allows scripts and styles from this origin only, and media from here and from the
 * output URLs' origin.
 */

const ASSET_NAME = /^[A-Za-z0-9_-]+-[A-Za-z0-9]{8,}\.(js|css)$/;
const TYPES: Readonly<Record<string, string>> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

/** dist/console next to the compiled server, or the repository's dist/console when run from source. */
function consoleDir(): string | undefined {
  for (const relative of ['../../console/', '../../../dist/console/']) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(`${dir}index.html`)) return dir;
  }
  return undefined;
}

const attribute = (text: string): string => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

function securityHeaders(mediaOrigin: string): Record<string, string> {
  const media = `'self' blob: data: ${mediaOrigin}`;
  return {
    'content-security-policy': [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      `img-src ${media}`,
      `media-src ${media}`,
      `connect-src 'self' ${mediaOrigin}`,
      "form-action 'none'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join('; '),
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'permissions-policy': 'camera=(), microphone=(), geolocation=()',
  };
}

interface ConsoleBuild {
  readonly page: string;
  readonly assets: ReadonlyMap<string, Buffer>;
}

/** The built console, read once per server (undefined when it was not built). */
function loadConsole(models: readonly ModelRow[], bodyLimitBytes: number): ConsoleBuild | undefined {
  const dir = consoleDir();
  if (!dir) return undefined;
  const hints = attribute(JSON.stringify(consoleHints(models, bodyLimitBytes)));
  const page = readFileSync(`${dir}index.html`, 'utf8').replace('__MEDIAGATE_HINTS__', hints);
  const assets = new Map<string, Buffer>();
  for (const name of readdirSync(`${dir}assets`)) if (ASSET_NAME.test(name)) assets.set(name, readFileSync(`${dir}assets/${name}`));
  return { page, assets };
}

const builds = new WeakMap<RouteDeps['ctx'], ConsoleBuild | null>();
function buildFor(deps: RouteDeps): ConsoleBuild | undefined {
  let build = builds.get(deps.ctx);
  if (build === undefined) {
    build = loadConsole(deps.ctx.models, deps.ctx.bodyLimitBytes) ?? null;
    builds.set(deps.ctx, build);
  }
  return build ?? undefined;
}

/** `GET /`: the console is the service's front page. */
export const redirectToConsole = (): Handler => async (_request, reply) => reply.redirect('/console', 302);

/** `GET /favicon.ico`: browsers ask for it on every page, media documents included; nothing rather than a 404 error. */
export const getFavicon = (): Handler => async (_request, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send();

/** `GET /console`: the page, revalidated every time so a new build is picked up at once. */
export function getConsolePage(deps: RouteDeps): Handler {
  const build = buildFor(deps);
  return async (_request, reply) => {
    if (!build) {
      return reply.code(503).type('text/plain; charset=utf-8').send('The console is not built: run `npm run build` (npm ci does it).\n');
    }
    let mediaOrigin = "'self'";
    try {
      mediaOrigin = new URL(deps.ctx.publicUrl()).origin;
    } catch {
      // The configured public URL was checked at start; keep 'self' if it ever is not a URL.
    }
    return reply.headers(securityHeaders(mediaOrigin)).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(build.page);
  };
}

/** `GET /console/assets/<name>-<hash>.<ext>`: hashed, so cached for a year. */
export function getConsoleAsset(deps: RouteDeps): Handler {
  const build = buildFor(deps);
  return async (request, reply) => {
    const name = pathParam(request, 'name');
    const body = build?.assets.get(name);
    if (!body) throw errors.assetNotFound(name);
    const ext = name.slice(name.lastIndexOf('.') + 1);
    return reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('cross-origin-resource-policy', 'same-origin')
      .type(TYPES[ext] ?? 'application/octet-stream')
      .send(body);
  };
}

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { MODELS } from '../catalog/index.js';
import { consoleHints } from './console-hints.js';

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
  for (const relative of ['../console/', '../../dist/console/']) {
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

export function registerConsole(app: FastifyInstance, options: { publicUrl: () => string; bodyLimitBytes: number }): void {
  const dir = consoleDir();
  app.get('/', async (_request, reply) => reply.redirect('/console', 302));
  // Browsers ask for it on every page, media documents included; nothing rather than a 404 error.
  app.get('/favicon.ico', async (_request, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send());
  if (!dir) {
    app.get('/console', async (_request, reply) =>
      reply.code(503).type('text/plain; charset=utf-8').send('The console is not built: run `npm run build` (npm ci does it).\n'),
    );
    return;
  }
  const hints = attribute(JSON.stringify(consoleHints(MODELS, options.bodyLimitBytes)));
  const page = readFileSync(`${dir}index.html`, 'utf8').replace('__MEDIAGATE_HINTS__', hints);
  const assets = new Map<string, Buffer>();
  for (const name of readdirSync(`${dir}assets`)) if (ASSET_NAME.test(name)) assets.set(name, readFileSync(`${dir}assets/${name}`));

  app.get('/console', async (_request, reply) => {
    let mediaOrigin = "'self'";
    try {
      mediaOrigin = new URL(options.publicUrl()).origin;
    } catch {
      // The configured public URL was checked at start; keep 'self' if it ever is not a URL.
    }
    return reply.headers(securityHeaders(mediaOrigin)).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(page);
  });
  app.get<{ Params: { name: string } }>('/console/assets/:name', async (request, reply) => {
    const body = assets.get(request.params.name);
    if (!body) return reply.code(404).type('text/plain; charset=utf-8').send('No such asset.\n');
    const ext = request.params.name.slice(request.params.name.lastIndexOf('.') + 1);
    return reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('cross-origin-resource-policy', 'same-origin')
      .type(TYPES[ext] ?? 'application/octet-stream')
      .send(body);
  });
}

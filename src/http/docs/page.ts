import type { Handler } from '../route.js';
import { rendererVersion } from './assets.js';

/**
 * `GET /docs`: the API reference, /openapi.json rendered in the browser by Swagger UI (its
 * operations grouped and ordered by the document's tags, each model's request schema, "try
 * it"). The page is a shell: every script and style comes from /docs/assets/ on this origin, and
 * its CSP forbids any other origin (no CDN, works offline) and any inline script.
 */

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Swagger UI sets a few style attributes as it renders; they come from its own code.
  "style-src 'self' 'unsafe-inline'",
  // Its icons are data: URLs in its stylesheet.
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

function page(version: string): string {
  const asset = (name: string): string => `/docs/assets/${name}?v=${version}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>mediagate API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${asset('swagger-ui.css')}">
<link rel="stylesheet" href="${asset('docs.css')}">
</head>
<body>
<noscript>The API reference needs JavaScript. The same description is at <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</noscript>
<div id="reference"></div>
<script src="${asset('swagger-ui-bundle.js')}"></script>
<script src="${asset('init.js')}"></script>
</body>
</html>
`;
}

export function getDocs(): Handler {
  const html = page(rendererVersion());
  return async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', CSP)
      .header('cache-control', 'no-cache')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .header('cross-origin-opener-policy', 'same-origin')
      .header('cross-origin-resource-policy', 'same-origin')
      .header('permissions-policy', 'camera=(), microphone=(), geolocation=()')
      .send(html);
}

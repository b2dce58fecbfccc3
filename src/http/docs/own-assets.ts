/**
 * The two files of /docs that are mediagate's own, next to Swagger UI's: the script that starts
 * the renderer (a file, not inline, so the page's CSP can forbid inline script) and a few rules
 * over Swagger UI's stylesheet. Both are served from /docs/assets/ like the renderer's files.
 */

/**
 * The document is fetched here rather than by URL so that its `servers` can be set to where the
 * page was loaded from: "try it" then talks to this origin whatever the configured public URL
 * (a proxy's name, a port mapping), and the page's CSP (connect-src 'self') holds. The
 * validator badge is off: it would load an image from another origin.
 */
export const INIT_SCRIPT = `(async () => {
  const base = new URL('.', location.href).href.replace(/\\/$/, '');
  const answer = await window.fetch(new URL('openapi.json', location.href));
  const spec = await answer.json();
  spec.servers = [{ url: base, description: 'this server' }];
  window.ui = SwaggerUIBundle({
    spec,
    dom_id: '#reference',
    validatorUrl: null,
    deepLinking: true,
    tryItOutEnabled: true,
    displayRequestDuration: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    defaultModelExpandDepth: 2,
    showExtensions: false,
    filter: true,
    persistAuthorization: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
})();
`;

/**
 * Swagger UI breaks parameter names and types anywhere (word-break: break-all), which splits
 * words mid-word in narrow columns; words wrap whole here, and long tokens (paths, model ids)
 * wrap at their punctuation before anything is cut. At a phone's width the page must not
 * scroll sideways: wide blocks (code, tables) scroll inside themselves instead.
 */
export const STYLE = `body { margin: 0; background: #fff; }
.swagger-ui .parameters-col_name, .swagger-ui .parameter__name, .swagger-ui .parameter__type,
.swagger-ui .model-title, .swagger-ui .prop-type, .swagger-ui .response-col_status, .swagger-ui td, .swagger-ui th {
  word-break: normal; overflow-wrap: break-word; hyphens: manual;
}
.swagger-ui .opblock-summary-path, .swagger-ui .opblock-summary-path a { word-break: normal; overflow-wrap: anywhere; }
.swagger-ui .wrapper { box-sizing: border-box; max-width: 100%; }
.swagger-ui pre, .swagger-ui .highlight-code, .swagger-ui .table-container, .swagger-ui .model-box { max-width: 100%; overflow-x: auto; }
.swagger-ui textarea, .swagger-ui input[type=text] { max-width: 100%; box-sizing: border-box; }
@media (max-width: 600px) {
  .swagger-ui .wrapper { padding: 0 8px; }
  .swagger-ui .opblock .opblock-summary { flex-wrap: wrap; }
  .swagger-ui .opblock-body .parameters-col_description { width: auto; }
}
`;

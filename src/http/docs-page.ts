import { describePrice, pricingView, type Pricing } from '../billing/index.js';
import type { ModelRow } from '../catalog/index.js';
import { EXAMPLE_PNG, EXAMPLE_PROMPT } from './docs-page-example.js';
import { escapeHtml as escape, METHODS, renderTryIt, tryItId } from './docs-page-try-it.js';
import { requestSchema } from './openapi.js';

/**
 * GET /docs: a page rendered from the OpenAPI document and the same schemas as /openapi.json:
 * the operations, a "try it" form for each (docs-page-try-it.ts; its one script comes from this
 * origin, nothing inline, no external assets), then every model's parameters with their types,
 * allowed values, ranges and defaults, and a request to copy.
 */

type Schema = Record<string, unknown>;

function typeOf(schema: Schema): string {
  const type = schema['type'];
  const base = Array.isArray(type) ? type.join(' | ') : typeof type === 'string' ? type : 'any';
  if (base === 'array') return 'array of strings';
  return base;
}

const bound = (value: unknown, open: string): string => (typeof value === 'number' ? String(value) : open);

function constraint(schema: Schema): string {
  const parts: string[] = [];
  if (Array.isArray(schema['enum'])) parts.push(`one of ${(schema['enum'] as unknown[]).map((v) => `<code>${escape(String(v))}</code>`).join(', ')}`);
  if (schema['const'] !== undefined) parts.push(`<code>${escape(JSON.stringify(schema['const']))}</code>`);
  if (schema['minimum'] !== undefined || schema['maximum'] !== undefined) {
    parts.push(`${bound(schema['minimum'], '−∞')} to ${bound(schema['maximum'], '∞')}`);
  }
  if (schema['minItems'] !== undefined) parts.push(`at least ${bound(schema['minItems'], '0')} items`);
  if (schema['maxItems'] !== undefined) parts.push(`at most ${bound(schema['maxItems'], '∞')} items`);
  if (typeof schema['maxLength'] === 'number') parts.push(`at most ${schema['maxLength']} characters`);
  const media = schema['format'] === 'media-input' ? schema : (schema['items'] as Schema | undefined);
  if (media?.['format'] === 'media-input') {
    const urlMax = media['x-url-max-length'];
    parts.push(typeof urlMax === 'number' ? `https:// URL (at most ${urlMax} characters) or Base64 data URL` : 'https:// URL or Base64 data URL');
  }
  if (schema['default'] !== undefined) parts.push(`default <code>${escape(JSON.stringify(schema['default']))}</code>`);
  return parts.join('; ');
}

function example(row: ModelRow): string {
  const body: Record<string, unknown> = { model: row.id, prompt: EXAMPLE_PROMPT };
  const schema = requestSchema(row);
  for (const name of (schema['required'] as string[]).filter((n) => n !== 'model' && n !== 'prompt')) {
    if (name === 'images') body[name] = [EXAMPLE_PNG];
    else if (name === 'aspect_ratio') body[name] = '16:9';
    else body[name] = EXAMPLE_PNG;
  }
  // Seed rule 1: this model needs one reference in some array, none of which is required.
  if (row.kind === 'video' && row.atLeastOneOf && body['images'] === undefined) body['images'] = [EXAMPLE_PNG];
  if (row.kind === 'video') body['duration'] = row.duration ? Math.max(row.duration.min, Math.min(4, row.duration.max)) : 4;
  const path = row.kind === 'video' ? '/v1/video/generations' : '/v1/images/generations/async';
  return `curl -s "$MEDIAGATE_BASE_URL${path}" \\\n  -H "Authorization: Bearer $MEDIAGATE_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '${JSON.stringify(body)}'`;
}

function modelSection(row: ModelRow, pricing: Pricing | undefined): string {
  const price = pricingView(pricing, row.id);
  const schema = requestSchema(row);
  const required = new Set(schema['required'] as string[]);
  const properties = schema['properties'] as Record<string, Schema>;
  const rows = Object.entries(properties)
    .map(
      ([name, p]) =>
        `<tr><td><code>${escape(name)}</code>${required.has(name) ? ' <b>required</b>' : ''}</td><td>${escape(typeOf(p))}</td><td>${constraint(p)}</td><td>${escape(typeof p['description'] === 'string' ? p['description'] : '')}</td></tr>`,
    )
    .join('\n');
  return `<section id="${escape(row.id)}"><h3><code>${escape(row.id)}</code> <small>${row.kind}</small></h3><p>${escape(row.summary)} <a href="/console#model=${escape(encodeURIComponent(row.id))}">Try it in the console</a></p>${price === undefined ? '' : `\n<p class="price">Price: ${escape(describePrice(price))}</p>`}
<table><thead><tr><th>parameter</th><th>type</th><th>allowed</th><th>meaning</th></tr></thead><tbody>${rows}</tbody></table>
<pre>${escape(example(row))}</pre></section>`;
}

/**
 * The operations table, from the OpenAPI document's `paths` (the route table's own description
 * of itself), so the page lists exactly the operations the server has.
 */
function operationRows(paths: Readonly<Record<string, unknown>>): string {
  const rows: string[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (item === null || typeof item !== 'object') continue;
    for (const method of METHODS) {
      const operation = (item as Record<string, unknown>)[method];
      if (operation === null || typeof operation !== 'object') continue;
      const { summary, security } = operation as { summary?: unknown; security?: unknown };
      const keyed = !(Array.isArray(security) && security.length === 0);
      rows.push(
        `<tr><td>${method.toUpperCase()}</td><td><a href="#${tryItId(method, path)}"><code>${escape(path)}</code></a></td><td>${escape(typeof summary === 'string' ? summary : '')}${keyed ? '' : ' <small>(no key)</small>'}</td></tr>`,
      );
    }
  }
  return rows.join('\n');
}

/**
 * `document`: the OpenAPI document the server serves at /openapi.json; `script`: the URL of the
 * "try it" script (undefined when the console, which carries it, is not built).
 */
export function renderDocsPage(
  models: readonly ModelRow[],
  pricing: Pricing | undefined,
  document: Readonly<Record<string, unknown>>,
  script?: string,
): string {
  const toc = models.map((row) => `<li><a href="#${escape(row.id)}">${escape(row.id)}</a></li>`).join('');
  const paths = (document['paths'] ?? {}) as Readonly<Record<string, unknown>>;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>mediagate API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
${script ? `<script type="module" src="${escape(script)}"></script>\n` : ''}<style>body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}
code,pre{font-family:ui-monospace,monospace;font-size:13px}pre{background:#f4f4f4;padding:.75rem;overflow:auto}
table{border-collapse:collapse;width:100%;margin:.5rem 0}td,th{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#fafafa}small{color:#777;font-weight:normal}section{margin:2rem 0}
details.try{border:1px solid #ddd;margin:.4rem 0;padding:.3rem .6rem}details.try summary{cursor:pointer;overflow-wrap:anywhere}
.field{display:flex;flex-direction:column;margin:.5rem 0;max-width:40rem}.field small{overflow-wrap:anywhere}
.field input,.field select,.field textarea{font:13px ui-monospace,monospace;padding:.3rem;box-sizing:border-box;width:100%;min-width:0}
.field textarea{resize:vertical;white-space:pre-wrap;overflow-wrap:anywhere}.actions button{margin-right:.5rem}
.try-out pre{max-height:24rem;white-space:pre-wrap;overflow-wrap:anywhere}.try-status[data-ok="false"]{color:#a00}</style></head><body>
<h1>mediagate API</h1>
<p>Asynchronous media generation: create a task, poll it until it carries output URLs, download the files. Every <code>/v1</code> operation needs <code>Authorization: Bearer &lt;API_KEY&gt;</code>. Timestamps are Unix seconds. The machine-readable description is <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1); <code>GET /v1/models</code> returns every model's JSON Schema.</p>
<p>To try a model in the browser, open <a href="/console">the console</a>. The requests below use <code>MEDIAGATE_BASE_URL</code> (e.g. <code>http://127.0.0.1:8080</code>) and <code>MEDIAGATE_API_KEY</code>, as the SDK and CLI do, and inline images as data URLs so they work offline.</p>
<h2>Operations</h2>
<p>Every operation of <a href="/openapi.json">/openapi.json</a>, where each one's parameters, bodies and answers are described.</p>
<table><thead><tr><th>method</th><th>path</th><th>what it does</th></tr></thead><tbody>
${operationRows(paths)}
</tbody></table>
${renderTryIt(document, script)}
<h2>Errors</h2>
<p>Video endpoints: <code>{"error":{"type","code","message","param"}}</code>; image endpoints: <code>{"code","message","data":null}</code>. Validation codes: <code>missing_parameter</code>, <code>invalid_parameter</code>, <code>unsupported_parameter</code>, <code>unsupported_value</code>; <code>param</code> names the top-level field at fault.</p>
<h2>Models</h2><ul>${toc}</ul>
${models.map((row) => modelSection(row, pricing)).join('\n')}
</body></html>`;
}

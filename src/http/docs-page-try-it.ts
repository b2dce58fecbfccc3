import { exampleOf } from './docs-page-example.js';

/**
 * The "try it" part of /docs: one form per operation of the OpenAPI document (its path, query
 * and header parameters, and a JSON body prefilled with an example of its schema), and one API
 * key field the forms share. The page itself runs no inline script: the form markup is here,
 * and the script that sends a form and shows the answer (console/src/try-it.ts, served with the
 * console's assets) only reads it, so every operation the document gains gets a form too.
 */

type Json = Readonly<Record<string, unknown>>;

export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

const isJson = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The anchor of an operation's form: `try-post-v1-video-generations`. */
export const tryItId = (method: string, path: string): string => `try-${method}-${path.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}`;

interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly required: boolean;
  readonly description: string;
  readonly schema: Json;
  /** The parameter's documented example: a required one is sent with it as it stands. */
  readonly example: string | undefined;
}

function parametersOf(operation: Json, item: Json): Parameter[] {
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? (value as unknown[]) : []);
  const parameters: Parameter[] = [];
  for (const p of [...list(item['parameters']), ...list(operation['parameters'])]) {
    if (!isJson(p) || typeof p['name'] !== 'string' || typeof p['in'] !== 'string') continue;
    if (!['path', 'query', 'header'].includes(p['in'])) continue;
    parameters.push({
      name: p['name'],
      in: p['in'],
      required: p['required'] === true,
      description: typeof p['description'] === 'string' ? p['description'] : '',
      schema: isJson(p['schema']) ? p['schema'] : {},
      example: typeof p['example'] === 'string' || typeof p['example'] === 'number' ? String(p['example']) : undefined,
    });
  }
  return parameters;
}

function parameterField(formId: string, p: Parameter): string {
  const id = `${formId}-${p.in}-${p.name.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  const attrs = `id="${id}" name="${escapeHtml(p.name)}" data-in="${p.in}"${p.required ? ' required' : ''}`;
  const values = Array.isArray(p.schema['enum'])
    ? (p.schema['enum'] as unknown[]).filter((v) => v !== null).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
    : undefined;
  const fallback = p.schema['default'] === undefined ? '' : JSON.stringify(p.schema['default']);
  const control = values
    ? `<select ${attrs}>${p.required ? '' : '<option value="">(not sent)</option>'}${values.map((v) => `<option>${escapeHtml(v)}</option>`).join('')}</select>`
    : `<input ${attrs} type="text" autocomplete="off" spellcheck="false"${fallback ? ` placeholder="${escapeHtml(fallback)}"` : ''}${p.example === undefined ? '' : ` value="${escapeHtml(p.example)}"`}>`;
  const note = [p.in, p.required ? 'required' : '', p.description].filter(Boolean).join(' · ');
  return `<div class="field"><label for="${id}"><code>${escapeHtml(p.name)}</code></label>${control}<small>${escapeHtml(note)}</small></div>`;
}

/** The JSON body a form starts with: the schema's example, or undefined when the operation takes none. */
function bodyExample(operation: Json, components: Json): string | undefined {
  const body = operation['requestBody'];
  const content = isJson(body) && isJson(body['content']) ? body['content'] : undefined;
  const media = content && isJson(content['application/json']) ? content['application/json'] : undefined;
  if (!media) return undefined;
  const value = 'example' in media ? media['example'] : isJson(media['schema']) ? exampleOf(media['schema'], components) : {};
  return JSON.stringify(value, null, 2);
}

function operationForm(method: string, path: string, operation: Json, item: Json, components: Json): string {
  const id = tryItId(method, path);
  const summary = typeof operation['summary'] === 'string' ? operation['summary'] : '';
  const keyed = !(Array.isArray(operation['security']) && operation['security'].length === 0);
  const streams = Object.values(isJson(operation['responses']) ? operation['responses'] : {}).some(
    (response) => isJson(response) && isJson(response['content']) && 'text/event-stream' in response['content'],
  );
  const fields = parametersOf(operation, item).map((p) => parameterField(id, p));
  const body = bodyExample(operation, components);
  if (body !== undefined) {
    fields.push(
      `<div class="field"><label for="${id}-body">JSON body</label><textarea id="${id}-body" name="body" data-in="body" rows="${Math.min(12, body.split('\n').length + 1)}" spellcheck="false">${escapeHtml(body)}</textarea></div>`,
    );
  }
  return `<details class="try" id="${id}"><summary><b>${method.toUpperCase()}</b> <code>${escapeHtml(path)}</code> <span>${escapeHtml(summary)}${keyed ? '' : ' <small>(no key)</small>'}</span></summary>
<form data-method="${method.toUpperCase()}" data-path="${escapeHtml(path)}" data-keyed="${keyed}"${streams ? ' data-stream="true"' : ''}>
${fields.join('\n')}
<div class="actions"><button type="submit">Send</button>${streams ? '<button type="button" class="stop" disabled>Stop</button>' : ''}</div>
</form>
<div class="try-out" aria-live="polite" hidden><p class="try-status"></p><pre class="try-headers"></pre><pre class="try-body"></pre></div></details>`;
}

/**
 * The section: the shared key, then each operation's form. `script`: the URL of the script that
 * makes the forms work, or undefined when the console is not built (the forms then say so).
 */
export function renderTryIt(document: Json, script: string | undefined): string {
  const paths = isJson(document['paths']) ? document['paths'] : {};
  const components = isJson(document['components']) && isJson(document['components']['schemas']) ? document['components']['schemas'] : {};
  const forms: string[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!isJson(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (isJson(operation)) forms.push(operationForm(method, path, operation, item, components));
    }
  }
  const status = script
    ? 'Each form sends its request from this page to this server and shows the answer: status, headers and body (an event stream as its events arrive).'
    : 'The forms need the script built with the console (<code>npm run build</code>), which this server does not have.';
  return `<h2 id="try-it">Try it</h2>
<p>${status} The key stays in this tab (the console's key is used when you come from there).</p>
<div class="field try-key"><label for="try-key">API key</label><input id="try-key" type="password" autocomplete="off" spellcheck="false" placeholder="mg_..."></div>
${forms.join('\n')}`;
}

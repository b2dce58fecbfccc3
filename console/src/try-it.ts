/**
 * The "try it" forms of /docs (their markup: src/http/docs-page-try-it.ts). A form names its
 * operation (data-method, data-path) and each field where it goes (data-in: path, query, header
 * or body); this script sends it to this origin with the shared API key and shows the answer:
 * status, headers and body, an event stream as its events arrive (until the server ends it or
 * Stop). After a create, the id it answers fills the empty id fields of the operations under it
 * (a created task's get, cancel and events), so create → get works without copying.
 */

const KEY_STORAGE = 'mediagate.apiKey'; // The console's: a key entered there is here too.

const keyField = document.querySelector<HTMLInputElement>('#try-key');

function readKey(): string {
  return keyField?.value.trim() ?? '';
}

function fields(form: HTMLFormElement, where: string): (HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement)[] {
  return [...form.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>(`[data-in="${where}"]`)];
}

/** The path with its parameters filled in; a model id keeps its slashes (`/v1/models/{model}`). */
function target(form: HTMLFormElement): string {
  const values = new Map(fields(form, 'path').map((field) => [field.name, field.value.trim()]));
  const path = (form.dataset['path'] ?? '').replace(/\{([^}]+)\}/g, (_match, name: string) => encodeURIComponent(values.get(name) ?? '').replace(/%2F/gi, '/'));
  const query = new URLSearchParams();
  for (const field of fields(form, 'query')) if (field.value.trim() !== '') query.set(field.name, field.value.trim());
  const search = query.toString();
  return search === '' ? path : `${path}?${search}`;
}

function requestHeaders(form: HTMLFormElement, hasBody: boolean): Headers {
  const headers = new Headers();
  const key = readKey();
  if (form.dataset['keyed'] === 'true' && key !== '') headers.set('authorization', `Bearer ${key}`);
  for (const field of fields(form, 'header')) if (field.value.trim() !== '') headers.set(field.name, field.value.trim());
  if (hasBody) headers.set('content-type', 'application/json');
  return headers;
}

interface Output {
  readonly box: HTMLElement;
  readonly status: HTMLElement;
  readonly headers: HTMLElement;
  readonly body: HTMLElement;
}

function outputOf(form: HTMLFormElement): Output | undefined {
  const box = form.parentElement?.querySelector<HTMLElement>('.try-out');
  const status = box?.querySelector<HTMLElement>('.try-status');
  const headers = box?.querySelector<HTMLElement>('.try-headers');
  const body = box?.querySelector<HTMLElement>('.try-body');
  return box && status && headers && body ? { box, status, headers, body } : undefined;
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** The id a create answered: `id` (video tasks, webhooks, keys) or `data.task_id` (image tasks). */
function createdId(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { id?: unknown; data?: { task_id?: unknown } | null };
    const id = body.id ?? body.data?.task_id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

function fillIds(path: string, id: string): void {
  for (const form of document.querySelectorAll<HTMLFormElement>('details.try form')) {
    const under = form.dataset['path'] ?? '';
    if (!under.startsWith(`${path}/{`)) continue;
    const first = fields(form, 'path')[0];
    if (first && first.value.trim() === '') first.value = id;
  }
}

async function readStream(response: Response, output: Output, signal: AbortSignal): Promise<void> {
  if (!response.body) return;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined), { once: true });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    output.body.textContent += decoder.decode(value, { stream: true });
    output.body.scrollTop = output.body.scrollHeight;
  }
}

async function send(form: HTMLFormElement, output: Output): Promise<void> {
  const method = form.dataset['method'] ?? 'GET';
  const bodyField = fields(form, 'body')[0];
  const body = bodyField?.value;
  const url = target(form);
  const stop = form.querySelector<HTMLButtonElement>('button.stop');
  const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]');
  const controller = new AbortController();
  const onStop = (): void => controller.abort();
  stop?.addEventListener('click', onStop, { once: true });
  output.box.hidden = false;
  output.status.textContent = `${method} ${url} …`;
  output.status.removeAttribute('data-status');
  output.status.removeAttribute('data-ended');
  output.headers.textContent = '';
  output.body.textContent = '';
  if (submit) submit.disabled = true;
  try {
    const init: RequestInit = { method, headers: requestHeaders(form, body !== undefined), signal: controller.signal };
    if (body !== undefined) init.body = body;
    const response = await fetch(url, init);
    output.status.textContent = `${response.status} ${response.statusText} · ${method} ${url}`;
    output.status.dataset['status'] = String(response.status);
    output.status.dataset['ok'] = String(response.ok);
    output.headers.textContent = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
    const type = response.headers.get('content-type') ?? '';
    if (type.startsWith('text/event-stream')) {
      if (stop) stop.disabled = false;
      await readStream(response, output, controller.signal);
    } else if (/^(application\/json|text\/)/.test(type) || type === '') {
      const text = await response.text();
      output.body.textContent = pretty(text);
      const id = response.ok && method === 'POST' ? createdId(text) : undefined;
      if (id) fillIds(form.dataset['path'] ?? '', id);
    } else {
      output.body.textContent = `(${(await response.arrayBuffer()).byteLength} bytes of ${type})`;
    }
  } catch (error) {
    if (!controller.signal.aborted) {
      output.status.textContent = `Not sent or no answer: ${error instanceof Error ? error.message : String(error)}`;
      output.status.dataset['ok'] = 'false';
    }
  } finally {
    // The whole answer is on the page (a stream: ended or stopped).
    output.status.dataset['ended'] = 'true';
    if (stop) stop.disabled = true;
    stop?.removeEventListener('click', onStop);
    if (submit) submit.disabled = false;
  }
}

if (keyField) {
  keyField.value = sessionStorage.getItem(KEY_STORAGE) ?? '';
  keyField.addEventListener('input', () => {
    if (readKey() === '') sessionStorage.removeItem(KEY_STORAGE);
    else sessionStorage.setItem(KEY_STORAGE, readKey());
  });
}

for (const form of document.querySelectorAll<HTMLFormElement>('details.try form')) {
  form.dataset['ready'] = 'true';
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const output = outputOf(form);
    if (output) void send(form, output);
  });
}

import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chromiumAvailability, launchChromium } from './helpers/chromium.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * /docs, the API reference rendered by Swagger UI, in real Chromium: every request the page
 * makes goes to this server (its CSP forbids any other origin; a request elsewhere fails the
 * spec), the groups come in the document's order with every operation of /openapi.json, each
 * create lists one example per model, "Try it out" sends a models list and a create with a key
 * and shows the answer (every operation sent as it stands gets one, never a 5xx; an event stream
 * is shown once it ends; a 401 and a 400 as they come), a required query parameter is
 * prefilled with its documented example,
 * Markdown is rendered (no raw backticks), words are not broken mid-word, and at a phone's
 * 390 px nothing scrolls sideways. Page-side values are read with string expressions: this spec
 * compiles without the DOM library.
 */

const availability = chromiumAvailability();
if (!availability.enabled) console.warn(availability.reason);

const ADMIN = 'mg_test_admin_key_0123456789';
const TAG_ORDER = ['Videos', 'Images', 'Models', 'Tasks', 'Webhooks', 'Usage', 'OpenAI-compatible', 'Admin'];
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

type Operation = { tags?: string[]; requestBody?: { content: Record<string, { examples?: Record<string, unknown> }> } };
type Document = {
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
};

describe.skipIf(!availability.enabled)('/docs: the API reference', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let document: Document;
  let problems: string[] = [];
  let elsewhere: string[] = [];
  /** Requests the page sent to the server under test (method and path), in order. */
  let sent: string[] = [];

  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_SANDBOX_FPS: '6', MEDIAGATE_ADMIN_KEYS: ADMIN });
    browser = await launchChromium();
    document = (await (await fetch(`${server.url}/openapi.json`)).json()) as Document;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  async function open(width: number): Promise<void> {
    context = await browser.newContext({ viewport: { width, height: 900 } });
    page = await context.newPage();
    const origin = new URL(server.url).origin;
    page.on('request', (request) => {
      const url = request.url();
      if (url.startsWith('data:')) return;
      if (new URL(url).origin !== origin) elsewhere.push(url);
      else sent.push(`${request.method()} ${new URL(url).pathname}`);
    });
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      // A 4xx the page was asked to send is logged as a failed resource: the answer under test.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
    });
    await page.goto(`${server.url}/docs`);
    await page.locator('.opblock-tag').first().waitFor();
  }

  beforeEach(async () => {
    problems = [];
    elsewhere = [];
    sent = [];
    await open(1280);
  });
  afterEach(async () => {
    await context?.close();
    expect(elsewhere, 'requests to another origin').toEqual([]);
    expect(problems.join('\n'), 'errors in the browser').toBe('');
  });

  const operation = (method: string, path: string): Locator => page.locator(`.opblock-${method}:has(.opblock-summary-path[data-path="${path}"])`);

  async function expand(method: string, path: string): Promise<Locator> {
    const block = operation(method, path);
    if ((await block.locator('.opblock-body').count()) === 0) await block.locator('.opblock-summary-control').click();
    await block.locator('.opblock-body').waitFor();
    return block;
  }

  async function authorize(key: string): Promise<void> {
    await page.locator('.auth-wrapper .authorize').click();
    await page.locator('.modal-ux input[type="text"], .modal-ux input[type="password"]').first().fill(key);
    await page.locator('.modal-ux .auth-btn-wrapper .authorize').click();
    await page.locator('.modal-ux .btn-done').click();
  }

  /**
   * Presses Execute and reads the answer the page shows. A press the page took while it was still
   * drawing the operation sends nothing: pressed again then, at most twice. A request that was
   * sent must be answered within the minute.
   */
  async function execute(block: Locator, what = ''): Promise<{ status: string; body: string; headers: string }> {
    const answer = block.locator('.live-responses-table .response').first();
    const before = sent.length;
    for (let press = 1; ; press += 1) {
      await block.locator('.btn.execute').click();
      const shown = await answer.waitFor({ timeout: 10_000 }).then(
        () => true,
        () => false,
      );
      if (shown) break;
      if (sent.length > before || press === 3) {
        const invalid = await block.locator('input.invalid, textarea.invalid, select.invalid').count();
        await answer.waitFor({ timeout: 60_000 }).catch((error: unknown) => {
          throw new Error(
            `${what}: no answer shown (${String(error)}; sent: ${sent.slice(before).join(', ') || 'nothing'}; fields the page marks invalid: ${invalid})`,
          );
        });
        break;
      }
    }
    // A body shown as text (a file to download has none).
    const body = answer.locator('.response-col_description .highlight-code pre');
    return {
      status: ((await answer.locator('.response-col_status').textContent()) ?? '').trim(),
      body: (await body.count()) > 0 ? ((await body.first().textContent()) ?? '') : '',
      headers: (await answer.locator('h5:text-is("Response headers") + pre').textContent()) ?? '',
    };
  }

  it('is served with a CSP that allows this origin only, and loads nothing from anywhere else', async () => {
    const reply = await fetch(`${server.url}/docs`);
    const csp = reply.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/https?:|\*/);
    expect(await reply.text()).not.toMatch(/<script>|src="(?!\/docs\/assets\/)/);
    // The page's requests were recorded from its first one (afterEach checks them).
    expect(await page.locator('.swagger-ui .info .title').textContent()).toContain('mediagate');
  });

  it('shows the groups in the order of the document, every operation of /openapi.json in its group', async () => {
    expect(document.tags.map((tag) => tag.name)).toEqual(TAG_ORDER);
    const groups = (await page.locator('.opblock-tag').allTextContents()).map((text) => TAG_ORDER.find((name) => text.startsWith(name)));
    expect(groups).toEqual(TAG_ORDER);
    const operations = (items: Record<string, Record<string, Operation>>) =>
      Object.entries(items).flatMap(([path, item]) =>
        Object.entries(item)
          .filter(([method]) => METHODS.includes(method))
          .map(([method, op]) => ({ op, name: `${method} ${path}` })),
      );
    for (const { op, name } of operations(document.paths)) expect(op.tags?.length, `${name}: tagged`).toBe(1);
    // The webhooks (requests the service sends) have a section of their own, after the groups.
    const expected = [...operations(document.paths), ...operations(document.webhooks)].map(({ name }) => name);
    expect(expected.length).toBeGreaterThan(25);
    const shown: string[] = [];
    for (const block of await page.locator('.opblock').all()) {
      const method = ((await block.locator('.opblock-summary-method').textContent()) ?? '').toLowerCase();
      shown.push(`${method} ${await block.locator('.opblock-summary-path').getAttribute('data-path')}`);
    }
    expect(shown.sort()).toEqual(expected.sort());
    const first = await page.locator('.opblock-tag-section').first().locator('.opblock-summary-path').allTextContents();
    expect(first.map((path) => path.replace(/\u200b/g, ''))).toEqual(['/v1/video/generations', '/v1/video/generations/{task_id}']);
  });

  it("lists one example request per model on each create, and each model's parameters in its request schema", async () => {
    const models = (await (await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.keys[0]}` } })).json()) as {
      data: { id: string; kind: string }[];
    };
    for (const [kind, path] of [
      ['video', '/v1/video/generations'],
      ['image', '/v1/images/generations/async'],
    ] as const) {
      const ids = models.data.filter((model) => model.kind === kind).map((model) => model.id);
      const examples = document.paths[path]?.['post']?.requestBody?.content['application/json']?.examples ?? {};
      expect(Object.keys(examples).sort()).toEqual([...ids].sort());
      const block = await expand('post', path);
      const options: string[] = [];
      for (const option of await block.locator('.opblock-section-request-body .examples-select-element option').all())
        options.push((await option.getAttribute('value')) ?? '');
      expect([...options].sort()).toEqual([...ids].sort());
      // The schema tab shows the model's request schema with its parameters.
      await block.locator('.opblock-section-request-body .tablinks[data-name="model"]').first().click();
      const schema = block.locator('.opblock-section-request-body .model-box').first();
      await expect.poll(() => schema.textContent()).toContain('One of');
      const first = `${kind === 'video' ? 'Video' : 'Image'} request: ${ids[0] ?? ''}`;
      await schema.getByText(first).first().click();
      await expect.poll(() => schema.textContent()).toContain('prompt');
    }
  });

  it('"Try it out": a models list and a video create with a key, each answer shown', async () => {
    await authorize(server.keys[0]);
    const list = await execute(await expand('get', '/v1/models'));
    expect(list.status).toBe('200');
    expect(list.body).toContain('vendora/famw-2.7-t2v');

    const create = await expand('post', '/v1/video/generations');
    const body = await create.locator('textarea.body-param__text').inputValue();
    expect(JSON.parse(body)).toMatchObject({ model: 'vendora/famw-2.7-t2v' });
    const created = await execute(create);
    expect(created.status).toBe('200');
    const task = JSON.parse(created.body) as { id: string; model: string; status: string };
    expect(task.model).toBe('vendora/famw-2.7-t2v');
    expect(['queued', 'in_progress', 'completed']).toContain(task.status);

    const refused = await execute(
      await expand('get', '/v1/video/generations/{task_id}').then(async (block) => {
        await block.locator('tr[data-param-name="task_id"] input').fill('vid_unknown');
        return block;
      }),
    );
    expect(refused.status).toBe('404');
  });

  it('sends every operation as its form stands (unknown ids where a path needs one): each gets an answer, shown, never a 5xx', async () => {
    await authorize(server.keys[1]);
    const answered: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of Object.keys(item).filter((m) => METHODS.includes(m))) {
        const block = await expand(method, path);
        // The parameter rows are drawn after the body appears: a field not there yet would stay
        // empty, and the page refuses to send an operation whose required field is empty.
        const fields = block.locator('tr[data-param-in="path"] input');
        await expect.poll(() => fields.count(), { message: `${method} ${path}: its path fields` }).toBe(path.match(/\{[^}]+\}/g)?.length ?? 0);
        for (const field of await fields.all()) {
          await field.fill('unknown_0');
          await expect.poll(() => field.inputValue()).toBe('unknown_0');
        }
        const answer = await execute(block, `${method} ${path}`);
        expect(Number(answer.status), `${method} ${path}: ${answer.body}`).toBeGreaterThanOrEqual(200);
        expect(Number(answer.status), `${method} ${path}: ${answer.body}`).toBeLessThan(500);
        expect(answer.headers, `${method} ${path}`).toMatch(/content-type: /);
        await block.locator('.opblock-summary-control').click();
        answered.push(`${method} ${path}`);
      }
    }
    expect(answered.length).toBeGreaterThan(25);
  }, 240_000);

  it("follows a task's events from the page until the final one (the stream ends there, and the page shows it)", async () => {
    const created = await fetch(`${server.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox', duration: 2 }),
    });
    const task = (await created.json()) as { id: string };
    await authorize(server.keys[0]);
    const block = await expand('get', '/v1/video/generations/{task_id}/events');
    await block.locator('tr[data-param-name="task_id"] input').fill(task.id);
    const events = await execute(block, 'events');
    expect(events.status).toBe('200');
    expect(events.headers).toMatch(/content-type: text\/event-stream/);
    expect(events.body).toContain('event: task');
    expect(events.body).toContain(`"id":"${task.id}"`);
    expect(events.body).toContain('"status":"completed"');
  });

  it('shows a refusal as it comes: no key is a 401 in the envelope, a bad body a 400 naming the field', async () => {
    const unkeyed = await execute(await expand('get', '/v1/models'));
    expect(unkeyed.status).toBe('401');
    expect(unkeyed.body).toContain('"invalid_api_key"');
    await authorize(server.keys[0]);
    const create = await expand('post', '/v1/video/generations');
    await create.locator('textarea.body-param__text').fill('{"model":"vendora/famw-2.7-t2v","prompt":"x","duration":"long"}');
    const refused = await execute(create);
    expect(refused.status).toBe('400');
    expect(refused.body).toContain('"param": "duration"');
  });

  it('prefills a required query parameter with its documented example, so the FOCUS export is sent as it stands', async () => {
    await authorize(ADMIN);
    const block = await expand('get', '/v1/admin/usage/export');
    expect(await block.locator('tr[data-param-name="from"] input').inputValue()).toBe('2026-11-01');
    expect(await block.locator('tr[data-param-name="to"] input').inputValue()).toBe('2026-11-30');
    const answer = await execute(block);
    expect(answer.status).toBe('200');
    expect(answer.headers).toContain('text/csv');
  });

  it('renders Markdown (no raw backticks) and breaks no word mid-word in its tables', async () => {
    for (const [method, path] of [
      ['post', '/v1/video/generations'],
      ['get', '/v1/admin/usage/export'],
      ['get', '/v1/video/generations/{task_id}/events'],
    ] as const)
      await expand(method, path);
    const text = await page.evaluate<string>('document.querySelector(".swagger-ui").innerText');
    expect(text).toContain('Idempotent-Replayed: true');
    expect(text).not.toContain('`');
    const styles = await page.evaluate<string[]>(
      '[...document.querySelectorAll(".swagger-ui td, .swagger-ui th, .parameter__name, .parameter__type, .prop-type")].map((e) => getComputedStyle(e).wordBreak + " " + getComputedStyle(e).overflowWrap)',
    );
    expect(styles.length).toBeGreaterThan(10);
    for (const style of new Set(styles)) expect(style).not.toMatch(/break-all|anywhere/);
  });

  it('fits a phone: nothing scrolls sideways at 390 px, an operation opened included', async () => {
    await context.close();
    await open(390);
    await expand('post', '/v1/video/generations');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
  });
});

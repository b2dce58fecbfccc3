import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chromiumAvailability, launchChromium } from './helpers/chromium.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * /docs "try it", in real Chromium at a phone's 390 px: every operation of /openapi.json has a
 * form; a create, a get, a list and an event stream sent from the page against a real server
 * show their answers (status, headers, body), the page's CSP lets the script do it, and nothing
 * scrolls sideways. Page-side values are read with string expressions: this spec compiles
 * without the DOM library.
 */

const availability = chromiumAvailability();
if (!availability.enabled) console.warn(availability.reason);

type Paths = Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: unknown }>>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

describe.skipIf(!availability.enabled)('/docs: try it', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[] = [];

  beforeAll(async () => {
    await ensureConsoleBuilt();
    server = await startServer({ MEDIAGATE_SANDBOX_FPS: '6' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });
  beforeEach(async () => {
    problems = [];
    context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    page = await context.newPage();
    // Script faults and CSP refusals; a 4xx the page was asked to send is logged by Chromium as
    // a failed resource, which is the answer under test, not a problem.
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
    });
    await page.goto(`${server.url}/docs`);
    await page.locator('details.try form[data-ready="true"]').first().waitFor({ state: 'attached' });
  });
  afterEach(async () => {
    await context?.close();
    expect(problems.join('\n'), 'errors in the browser').toBe('');
  });

  const operation = (method: string, path: string): Locator => page.locator(`details.try:has(form[data-method="${method}"][data-path="${path}"])`);

  /** Opens an operation, fills its fields (by parameter name, or `body`), sends, waits for the answer. */
  async function send(method: string, path: string, values: Record<string, string> = {}): Promise<{ status: string; headers: string; body: string }> {
    const section = operation(method, path);
    if ((await section.getAttribute('open')) === null) await section.locator('summary').click();
    for (const [name, value] of Object.entries(values)) await section.locator(`[name="${name}"]`).fill(value);
    await section.getByRole('button', { name: 'Send', exact: true }).click();
    // data-ended: the whole answer is shown (an event stream: until the server ended it).
    const status = section.locator('.try-status');
    await expect.poll(() => status.getAttribute('data-ended'), { timeout: 60_000 }).toBe('true');
    return {
      status: (await status.getAttribute('data-status')) ?? '',
      headers: (await section.locator('.try-headers').textContent()) ?? '',
      body: (await section.locator('.try-body').textContent()) ?? '',
    };
  }

  it('has a form for every operation of /openapi.json, with its path and query parameters and a JSON body where it takes one', async () => {
    const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Paths };
    const expected = Object.entries(openapi.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
    );
    expect(expected.length).toBeGreaterThan(20);
    const forms: string[] = [];
    for (const form of await page.locator('details.try form').all())
      forms.push(`${await form.getAttribute('data-method')} ${await form.getAttribute('data-path')}`);
    expect(forms.sort()).toEqual(expected.map(({ method, path }) => `${method} ${path}`).sort());
    for (const { method, path, op } of expected) {
      const form = operation(method, path).locator('form');
      for (const p of (op.parameters ?? []).filter((p) => p.in === 'path' || p.in === 'query')) {
        expect(await form.locator(`[name="${p.name}"][data-in="${p.in}"]`).count(), `${method} ${path}: ${p.in} ${p.name}`).toBe(1);
      }
      const body = form.locator('textarea[data-in="body"]');
      expect(await body.count(), `${method} ${path}: body`).toBe(op.requestBody === undefined ? 0 : 1);
      if (op.requestBody !== undefined) {
        const text = await body.inputValue();
        expect(() => JSON.parse(text) as unknown, `${method} ${path}: body`).not.toThrow();
      }
    }
  });

  it('sends every operation as its form stands (unknown ids where a path needs one): each gets an answer, shown, never a 5xx', async () => {
    await page.getByLabel('API key', { exact: true }).fill(server.keys[1]);
    const forms = await page.locator('details.try form').all();
    const answered: string[] = [];
    for (const form of forms) {
      const method = (await form.getAttribute('data-method')) ?? '';
      const path = (await form.getAttribute('data-path')) ?? '';
      const values: Record<string, string> = {};
      for (const field of await form.locator('[data-in="path"]').all()) values[(await field.getAttribute('name')) ?? ''] = 'unknown_0';
      const answer = await send(method, path, values);
      expect(Number(answer.status), `${method} ${path}: ${answer.body}`).toBeLessThan(500);
      expect(answer.headers, `${method} ${path}`).toMatch(/^content-type: /m);
      answered.push(`${method} ${path}`);
    }
    expect(answered.length).toBe(forms.length);
  });

  it('create, get and list a video task from the page: each answer shown, the id carried over, nothing sideways at 390 px', async () => {
    await page.getByLabel('API key', { exact: true }).fill(server.keys[0]);
    const created = await send('POST', '/v1/video/generations');
    expect(created.status).toBe('200');
    expect(created.headers).toMatch(/^content-type: application\/json/m);
    const task = JSON.parse(created.body) as { id: string; model: string; status: string };
    expect(task.model).toBe('vendora/famw-2.7-t2v');
    expect(['queued', 'in_progress', 'completed']).toContain(task.status);

    // The create's id filled the task's get; sent as it stands.
    const getForm = operation('GET', '/v1/video/generations/{task_id}');
    expect(await getForm.locator('[name="task_id"]').inputValue()).toBe(task.id);
    const got = await send('GET', '/v1/video/generations/{task_id}');
    expect(got.status).toBe('200');
    expect((JSON.parse(got.body) as { id: string }).id).toBe(task.id);

    const listed = await send('GET', '/v1/video/generations', { limit: '5' });
    expect(listed.status).toBe('200');
    expect((JSON.parse(listed.body) as { data: { id: string }[] }).data.map((t) => t.id)).toContain(task.id);

    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
  });

  it("streams a task's events until the final one; an image create and a model id with slashes work too", async () => {
    await page.getByLabel('API key', { exact: true }).fill(server.keys[0]);
    const created = JSON.parse(
      (await send('POST', '/v1/video/generations', { body: '{"model":"vendora/famw-2.7-t2v","prompt":"a fox","duration":2}' })).body,
    ) as {
      id: string;
    };
    const events = await send('GET', '/v1/video/generations/{task_id}/events');
    expect(events.status).toBe('200');
    expect(events.headers).toMatch(/^content-type: text\/event-stream/m);
    expect(events.body).toContain('event: task');
    expect(events.body).toContain(`"id":"${created.id}"`);
    expect(events.body).toContain('"status":"completed"');

    const image = await send('POST', '/v1/images/generations/async');
    expect(image.status).toBe('200');
    expect(image.body).toContain('task_id');

    const model = await send('GET', '/v1/models/{model}', { model: 'vendora/famw-2.7-t2v' });
    expect(model.status).toBe('200');
    expect((JSON.parse(model.body) as { id: string }).id).toBe('vendora/famw-2.7-t2v');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
  });

  it('shows a refusal as it comes: no key is a 401 in the envelope, a bad body a 400 naming the field', async () => {
    const unkeyed = await send('GET', '/v1/models');
    expect(unkeyed.status).toBe('401');
    expect(unkeyed.body).toContain('"code"');
    await page.getByLabel('API key', { exact: true }).fill(server.keys[0]);
    const refused = await send('POST', '/v1/video/generations', { body: '{"model":"vendora/famw-2.7-t2v","prompt":"x","duration":"long"}' });
    expect(refused.status).toBe('400');
    expect(refused.body).toContain('"param": "duration"');
  });
});

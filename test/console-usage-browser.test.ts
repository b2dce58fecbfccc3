import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthenticationError, KeyNotFoundError, Mediagate, MediagateAdmin } from '../src/client/index.js';
import { chromiumAvailability, launchChromium } from './helpers/chromium.js';
import { eventually } from './helpers/eventually.js';
import { envKeyId } from './helpers/ledger.js';
import { rejectsWith } from './helpers/rejections.js';
import { ADMIN_KEY, startPricedServer, type PricedServer } from './helpers/priced-server.js';
import type { TestServer } from './helpers/server.js';

/**
 * The console's Usage view (client key) and Keys view (admin key) in real Chromium, against a
 * real server with a pricing file (so costs are not 0) and an admin key; tasks are rendered by
 * the instant engine, whose videos state their duration, so they are billed like renders. Every
 * spec opens a fresh page (its own context: sessionStorage, clipboard permission), watches it
 * for console errors and refused requests, and leaves screenshots in test-artifacts/console/
 * (`usage-*`, `keys-*`), at 1440 and at 390 px wide.
 */

const availability = chromiumAvailability();
if (!availability.enabled) console.warn(availability.reason);

const ARTIFACTS = join(import.meta.dirname, '..', 'test-artifacts', 'console');
const T2V = 'vendora/famw-2.7-t2v';
const IMAGE = 'vendora/famz-image-spicy';
const PRICING = { currency: 'EUR', models: { [T2V]: { per_task: 0.1, per_second: 0.1 }, '*': { per_image: 0.02, per_second: 0.1 } } };
const FAST = { pollInterval: 50, maxPollInterval: 200 } as const;

interface Opened {
  readonly page: Page;
  readonly context: BrowserContext;
  /** Console errors and warnings, page errors, responses >= 400, minus the ones the spec expects. */
  readonly problems: (expected?: readonly RegExp[]) => string[];
}

describe.skipIf(!availability.enabled)('console usage and keys in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let priced: PricedServer | undefined;
  let admin: MediagateAdmin;
  const today = new Date().toISOString().slice(0, 10);

  const shot = (page: Page, name: string): Promise<Buffer> => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  /** A fresh page with `key` entered; resolves once the console has told what the key is. */
  async function open(key: string, width = 1440): Promise<Opened> {
    const context = await browser.newContext({ viewport: { width, height: 1000 }, permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    const seen: string[] = [];
    page.on('console', (message: ConsoleMessage) => {
      if (message.type() === 'error' || message.type() === 'warning') seen.push(`${message.type()}: ${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => seen.push(`pageerror: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() >= 400) seen.push(`HTTP ${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`);
    });
    await page.goto(`${server.url}/console`);
    await page.getByLabel('API key', { exact: true }).fill(key);
    await page.getByLabel('API key', { exact: true }).press('Enter');
    await page.waitForFunction(() => !document.querySelector('select')?.disabled || document.querySelector('.keys') !== null);
    return {
      page,
      context,
      problems: (expected = []) => seen.filter((line) => !expected.some((pattern) => pattern.test(line))),
    };
  }

  /** An admin key is refused once on a client operation before the console asks the admin API. */
  const ADMIN_PROBE = [/HTTP 401 GET \/v1\/models$/, /status of 401.*\/v1\/models\)$/];

  const overflow = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    for (const name of await readdir(ARTIFACTS)) if (/^(usage|keys)-/.test(name)) await rm(join(ARTIFACTS, name), { force: true });
    // The second key has a budget of 1 a month, set before its first request (budgets are cached a few seconds).
    priced = await startPricedServer(PRICING, { amount: 1, period: 'month' });
    server = priced.server;
    const first = new Mediagate({ baseURL: server.url, apiKey: server.keys[0] });
    await first.videos.createAndWait({ model: T2V, prompt: 'usage one', duration: 4 }, FAST);
    await first.videos.createAndWait({ model: T2V, prompt: 'usage two', duration: 2 }, FAST);
    await first.images.createAndWait({ model: IMAGE, prompt: 'usage three' }, FAST);
    const second = new Mediagate({ baseURL: server.url, apiKey: server.keys[1] });
    await second.videos.createAndWait({ model: T2V, prompt: 'within budget', duration: 4 }, FAST);
    admin = new MediagateAdmin({ baseURL: server.url, apiKey: ADMIN_KEY });
    browser = await launchChromium();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await priced?.close();
  });

  describe('the Usage view of a client key', () => {
    it('shows spent and reserved against the budget as a bar, the totals, a bar per day and a row per model', async () => {
      const { page, context, problems } = await open(server.keys[1]);
      await page.getByRole('tab', { name: 'Usage', exact: true }).click();
      const panel = page.getByRole('region', { name: 'Usage', exact: true });
      await panel.locator('.budget-line').waitFor();
      expect(await panel.locator('.budget-line').textContent()).toMatch(
        /^0\.50 spent \+ 0\.00 reserved of 1\.00 EUR a month \(50\.0%\)0\.50 left · resets \d{4}-\d{2}-01 00:00 UTC$/,
      );
      expect(await panel.locator('.budget-bar rect.spent').getAttribute('width')).toBe('50%');
      expect(await panel.locator('.budget-bar rect.reserved').getAttribute('width')).toBe('0%');
      expect(await panel.locator('.totals dd').allTextContents()).toEqual(['1', '4', '0', '0.50']);
      // A bar per day of the month, today's the tallest.
      const now = new Date();
      const daysInMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).getUTCDate();
      expect(await panel.locator('svg.bars rect').count()).toBe(daysInMonth);
      expect(await panel.locator(`svg.bars rect[data-label="${today}"]`).getAttribute('height')).toBe('100');
      expect(await panel.locator('svg.bars rect.zero').count()).toBe(daysInMonth - 1);
      expect(await panel.locator('.chart-max').textContent()).toBe('max 0.50 EUR');
      expect(await panel.locator('.usage-table tbody tr').evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => cell.textContent)))).toEqual([
        [T2V, '1', '4', '0', '0.50', '100.0%'],
      ]);
      await shot(page, 'usage-client-budget');
      expect(problems()).toEqual([]);
      await context.close();
    });

    it('without a budget: what the key spent in all; a range of days narrows the report and Current period restores it', async () => {
      const { page, context, problems } = await open(server.keys[0]);
      await page.getByRole('tab', { name: 'Usage', exact: true }).click();
      const panel = page.getByRole('region', { name: 'Usage', exact: true });
      await panel.locator('.budget-line').waitFor();
      expect(await panel.locator('.budget-line').textContent()).toBe('No budget. Spent 0.82 EUR in all.');
      expect(await panel.locator('.budget-bar').count()).toBe(0);
      expect(await panel.locator('.usage-table tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-row')))).toEqual([T2V, IMAGE]);
      expect(await panel.locator('.usage-table tbody tr').first().locator('td').allTextContents()).toEqual(['2', '6', '0', '0.80', '97.6%']);

      const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      await panel.getByLabel('From', { exact: true }).fill(yesterday);
      await panel.getByLabel('To', { exact: true }).fill(yesterday);
      await panel.getByRole('button', { name: 'Show', exact: true }).click();
      await expect.poll(() => panel.getByRole('status').textContent()).toContain(`${yesterday} to ${yesterday}`);
      expect(await panel.locator('.usage-block').last().textContent()).toContain('No finished tasks in this range.');
      expect(await panel.locator('.totals dd').allTextContents()).toEqual(['0', '0', '0', 'nothing charged']);
      expect(await panel.locator('.chart-max').textContent()).toBe('nothing yet');
      await panel.getByRole('button', { name: 'Current period', exact: true }).click();
      await expect.poll(() => panel.locator('.totals dd').allTextContents()).toEqual(['3', '6', '1', '0.82']);
      await shot(page, 'usage-client-no-budget');
      expect(problems()).toEqual([]);
      await context.close();
    });

    it('at 390 px: nothing wider than the screen, the table scrolls inside its box', async () => {
      const { page, context, problems } = await open(server.keys[1], 390);
      await page.setViewportSize({ width: 390, height: 1000 });
      await page.getByRole('tab', { name: 'Usage', exact: true }).click();
      await page.locator('.usage-panel .budget-line').waitFor();
      await shot(page, 'usage-client-390');
      expect(await overflow(page)).toBe(0);
      const bar = await page.locator('.budget-bar').boundingBox();
      expect(bar?.width).toBeGreaterThan(250);
      expect(problems()).toEqual([]);
      await context.close();
    });

    it('a finished task shows what it was billed; a create over the budget says so and leads to the Usage view', async () => {
      // A key of its own, so the other specs' sums stay as they are.
      const billing = await admin.keys.create({ name: 'console billing' });
      const { page, context, problems } = await open(billing.key);
      await page.getByLabel('Model', { exact: true }).selectOption(T2V);
      await page.getByLabel('prompt', { exact: true }).fill('billed in the console');
      await page.getByLabel('duration', { exact: true }).fill('3');
      await page.getByRole('button', { name: 'Generate', exact: true }).press('Enter');
      await page.waitForFunction(() => document.querySelector<HTMLElement>('.status')?.dataset['status'] === 'completed', null, { timeout: 30_000 });
      await expect.poll(() => page.locator('.billing').textContent()).toBe('Billed: 3 s · EUR 0.40');
      await expect.poll(() => page.locator('.history li[data-task] .cost').allTextContents()).toEqual(['EUR 0.40']);
      await shot(page, 'usage-billed-task');
      expect(problems()).toEqual([]);
      await context.close();

      // 0.5 of 1 is left: a 5 s video may cost 0.6.
      const over = await open(server.keys[1]);
      await over.page.getByLabel('Model', { exact: true }).selectOption(T2V);
      await over.page.getByLabel('prompt', { exact: true }).fill('too much');
      await over.page.getByLabel('duration', { exact: true }).fill('5');
      await over.page.getByRole('button', { name: 'Generate', exact: true }).press('Enter');
      const refusal = over.page.locator('.refusal');
      await refusal.waitFor();
      expect(await refusal.textContent()).toContain('HTTP 402');
      expect(await refusal.textContent()).toContain('This key’s budget cannot hold the most this task could cost.');
      expect(await refusal.locator('pre').textContent()).toContain('"code": "budget_exceeded"');
      await shot(over.page, 'usage-budget-exceeded');
      await refusal.getByRole('button', { name: 'See usage and budget' }).click();
      await over.page.locator('.usage-panel .budget-line').waitFor();
      expect(await over.page.getByRole('tab', { name: 'Usage', exact: true }).getAttribute('aria-selected')).toBe('true');
      expect(over.problems([/HTTP 402 POST \/v1\/video\/generations$/, /status of 402.*\/v1\/video\/generations\)$/])).toEqual([]);
      await over.context.close();
    });
  });

  describe('the Keys view of an admin key', () => {
    it('opens instead of Generate, and makes a key shown once with a copy button, that works at once', async () => {
      const { page, context, problems } = await open(ADMIN_KEY);
      await page.locator('.keys li.key').first().waitFor();
      expect(await page.getByRole('tablist').isHidden()).toBe(true);
      expect(await page.getByRole('region', { name: 'Model choice', exact: true }).isHidden()).toBe(true);
      expect(await page.locator('.keybar [role="status"]').textContent()).toContain('Admin key');

      const form = page.getByRole('form', { name: 'Create a key' });
      await form.getByLabel('Name', { exact: true }).fill('team a');
      await form.getByLabel('Budget', { exact: true }).fill('2.5');
      await form.getByLabel('Budget period', { exact: true }).selectOption('day');
      await form.getByLabel('Models', { exact: true }).fill('vendora/famw-*');
      await form.getByLabel('Creates per minute', { exact: true }).fill('30');
      await form.getByRole('button', { name: 'Create key' }).click();
      const created = page.getByRole('region', { name: 'New key' });
      await created.waitFor();
      const key = await created.getByLabel('The new key', { exact: true }).inputValue();
      expect(key).toMatch(/^mg_\S+$/);
      expect(await created.textContent()).toContain('Copy it now: it is not shown again.');
      await created.getByRole('button', { name: 'Copy key' }).click();
      await expect.poll(() => created.getByRole('button', { name: 'Copied' }).count()).toBe(1);
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
      // The form is empty again, for the next key.
      expect(await form.getByLabel('Name', { exact: true }).inputValue()).toBe('');

      const card = page.getByRole('listitem', { name: 'key team a' });
      expect(await card.locator('.key-limits').textContent()).toMatch(/^vendora\/famw-\* · 30 creates\/min · default tasks at once · since \d{4}-/);
      expect(await card.locator('.key-budget .hint').textContent()).toBe('0.00 spent + 0.00 reserved of 2.50 EUR a day (0.0%)');
      await shot(page, 'keys-created');

      const holder = new Mediagate({ baseURL: server.url, apiKey: key });
      expect((await holder.models.list()).every((model) => model.id.startsWith('vendora/famw-'))).toBe(true);
      await created.getByRole('button', { name: 'Done' }).click();
      expect(await page.getByRole('region', { name: 'New key' }).count()).toBe(0);
      expect(problems(ADMIN_PROBE)).toEqual([]);
      await context.close();
    });

    it('edits budget, period, models and limits; disables, enables and revokes a key, as its holder sees it', async () => {
      const made = await admin.keys.create({ name: 'editable', budget: 5, budget_period: 'month', models: ['vendora/famz-*'] });
      const holder = new Mediagate({ baseURL: server.url, apiKey: made.key, maxRetries: 0 });
      const { page, context, problems } = await open(ADMIN_KEY);
      const card = page.getByRole('listitem', { name: 'key editable' });
      await card.waitFor();
      await card.getByRole('button', { name: 'Edit' }).click();
      const edit = card.getByRole('form', { name: 'Edit editable' });
      expect(await edit.getByLabel('Models', { exact: true }).inputValue()).toBe('vendora/famz-*');
      await edit.getByLabel('Budget', { exact: true }).fill('1.25');
      await edit.getByLabel('Budget period', { exact: true }).selectOption('day');
      await edit.getByLabel('Models', { exact: true }).fill('');
      await edit.getByLabel('Tasks at once', { exact: true }).fill('2');
      await shot(page, 'keys-edit');
      // From the keyboard: a click right after a full-page screenshot can land while the page is laid out again.
      await edit.getByRole('button', { name: 'Save' }).press('Enter');
      await expect.poll(() => card.locator('.key-budget .hint').textContent()).toBe('0.00 spent + 0.00 reserved of 1.25 EUR a day (0.0%)');
      expect(await card.locator('.key-limits').textContent()).toMatch(/^every model · default rate · 2 tasks at once/);
      expect(await admin.keys.retrieve(made.id)).toMatchObject({ budget: 1.25, budget_period: 'day', models: null, max_tasks_in_flight: 2, disabled: false });

      await card.getByRole('button', { name: 'Disable' }).click();
      await expect.poll(() => card.locator('.badge').textContent()).toBe('disabled');
      await eventually(
        async () =>
          (await holder.models.list().then(
            () => undefined,
            (error: unknown) => error,
          )) instanceof AuthenticationError,
        {
          what: 'the disabled key to be refused',
        },
      );
      await shot(page, 'keys-disabled');
      await card.getByRole('button', { name: 'Enable' }).click();
      await expect.poll(() => card.locator('.badge').textContent()).toBe('active');
      await eventually(async () => (await holder.models.list()).length > 0, { what: 'the enabled key to be accepted' });

      const deletes: string[] = [];
      page.on('request', (request) => {
        if (request.method() === 'DELETE') deletes.push(request.url());
      });
      await card.getByRole('button', { name: 'Revoke' }).click();
      // Not yet: the button now says what a second press does, and nothing was sent.
      await card.getByRole('button', { name: 'Revoke for good' }).waitFor();
      expect(deletes).toEqual([]);
      expect((await admin.keys.retrieve(made.id)).id).toBe(made.id);
      await card.getByRole('button', { name: 'Revoke for good' }).click();
      await expect.poll(() => page.getByRole('listitem', { name: 'key editable' }).count()).toBe(0);
      expect(deletes).toHaveLength(1);
      await rejectsWith(admin.keys.retrieve(made.id), KeyNotFoundError);
      expect(problems(ADMIN_PROBE)).toEqual([]);
      await context.close();
    }, 60_000);

    it('shows a refusal at the field it is about', async () => {
      const { page, context, problems } = await open(ADMIN_KEY);
      const form = page.getByRole('form', { name: 'Create a key' });
      await form.getByLabel('Budget', { exact: true }).fill('-1');
      await form.getByLabel('Name', { exact: true }).fill('negative');
      await form.getByRole('button', { name: 'Create key' }).click();
      const error = form.locator('.f-budget .error');
      await error.waitFor();
      expect(await error.textContent()).toMatch(/^HTTP 400 unsupported_value: 'budget' must not be negative/);
      await form.getByLabel('Budget', { exact: true }).fill('');
      await form.getByLabel('Name', { exact: true }).fill('');
      await form.getByRole('button', { name: 'Create key' }).click();
      await expect.poll(() => form.locator('.f-name .error').textContent()).toMatch(/^HTTP 400 invalid_parameter: 'name' must not be empty/);
      expect(await form.locator('.f-budget .error').isHidden()).toBe(true);
      await shot(page, 'keys-refusal');
      expect(problems([...ADMIN_PROBE, /HTTP 400 POST \/v1\/admin\/keys$/, /status of 400.*\/v1\/admin\/keys\)$/])).toEqual([]);
      await context.close();
    });

    it('shows usage by key with names, and one key’s days and models on demand; nothing overflows at 390 px', async () => {
      for (const width of [1440, 390]) {
        const { page, context, problems } = await open(ADMIN_KEY, width);
        const panel = page.getByRole('region', { name: 'Usage by key' });
        await panel.locator('.usage-table').waitFor();
        const rows: Record<string, (string | null)[]> = await panel
          .locator('.usage-table tbody tr')
          .evaluateAll((items): Record<string, (string | null)[]> =>
            Object.fromEntries(items.map((row) => [row.getAttribute('data-row') ?? '', [...row.querySelectorAll('td')].map((cell) => cell.textContent)])),
          );
        expect(rows[envKeyId(server.keys[0])]?.slice(0, 4)).toEqual(['3', '6', '1', '0.82']);
        expect(rows[envKeyId(server.keys[1])]?.slice(0, 4)).toEqual(['1', '4', '0', '0.50']);
        expect(await panel.locator(`.usage-table tr[data-row="${envKeyId(server.keys[1])}"] th`).textContent()).toBe(`env ${envKeyId(server.keys[1])}`);

        const card = page.locator(`li.key[data-key="${envKeyId(server.keys[0])}"]`);
        await card.getByRole('button', { name: 'Usage' }).click();
        const detail = panel.locator('.key-detail');
        await detail.locator('.usage-table').waitFor();
        expect(await detail.locator('h3').textContent()).toBe(`env ${envKeyId(server.keys[0])}`);
        expect(await detail.locator('.usage-table tbody tr').evaluateAll((items) => items.map((row) => row.getAttribute('data-row')))).toEqual([T2V, IMAGE]);
        expect(await detail.locator(`svg.bars rect[data-label="${today}"]`).getAttribute('height')).toBe('100');
        expect(await overflow(page)).toBe(0);
        await shot(page, `keys-usage-${width}`);
        expect(problems(ADMIN_PROBE)).toEqual([]);
        await context.close();
      }
    });
  });
});

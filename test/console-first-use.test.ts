import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chromiumAvailability, launchChromium } from './helpers/chromium.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * The console on first use, in real Chromium at 1280x900: the models load while the key is
 * typed, the form starts on a model that needs only a prompt, a portrait result fits the
 * window with its status and Download, the curl command names this server, and the history
 * (empty, filtered, reopened) says and restores what it should, with a thumbnail per result.
 * (/docs: test/docs-reference.test.ts.)
 */

const availability = chromiumAvailability();
if (!availability.enabled) console.warn(availability.reason);

describe.skipIf(!availability.enabled)('console: first use', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[] = [];
  const field = (name: string) => page.getByLabel(name, { exact: true });

  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_SANDBOX_FPS: '6' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });
  beforeEach(async () => {
    problems = [];
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    await page.goto(`${server.url}/console`);
  });
  afterEach(async () => {
    await context?.close();
    expect(problems.join('\n'), 'errors or warnings in the browser console').toBe('');
  });

  /** Types the key (no Enter, no leaving the field) and waits for the models. */
  async function typeKey(key: string): Promise<void> {
    await field('API key').pressSequentially(key, { delay: 5 });
    await page.waitForFunction(() => !document.querySelector<HTMLSelectElement>('select')?.disabled, null, { timeout: 10_000 });
  }

  async function generateAndSettle(): Promise<string> {
    await page.getByRole('button', { name: 'Generate', exact: true }).press('Enter');
    await page.waitForFunction(() => ['completed', 'failed'].includes(document.querySelector<HTMLElement>('.status')?.dataset['status'] ?? ''), null, {
      timeout: 60_000,
    });
    expect(await page.locator('.status').getAttribute('data-status')).toBe('completed');
    // No pricing file: what was billed, and no amount ("USD 0.00" would say it was priced).
    expect(await page.locator('.billing').textContent()).toMatch(/^Billed: (\d+ s|\d+ images?)$/);
    return ((await page.locator('.status').textContent()) ?? '').split(':')[0] ?? '';
  }

  it('before the key, the history asks for it; typing the key loads the models and starts on a text-to-video model', async () => {
    await expect.poll(() => page.locator('.history-panel .hint').textContent()).toBe('Enter the API key above to see its tasks.');
    expect(await page.locator('.history-panel').textContent()).not.toContain('no list operation');
    await typeKey(server.keys[0]);
    expect(await field('Model').inputValue()).toBe('vendora/famw-2.7-t2v');
    await expect.poll(() => page.locator('.history-panel .hint').textContent()).toBe('Tasks of this API key, newest first.');
  });

  it('a 9:16 video: the status, Download and the whole player fit in the window; the curl command names this server', async () => {
    await typeKey(server.keys[0]);
    await field('prompt').fill('a portrait fox');
    await field('aspect_ratio').selectOption('9:16');
    await field('duration').fill('2');
    await generateAndSettle();
    // The result's player: the model card above it may show an example video of the key's own.
    await page.waitForFunction(() => (document.querySelector<HTMLVideoElement>('.media-result video')?.readyState ?? 0) >= 1, null, { timeout: 30_000 });
    const boxes = await page.evaluate(() => {
      const bottom = (selector: string): number => document.querySelector(selector)?.getBoundingClientRect().bottom ?? Infinity;
      const video = document.querySelector('.media-result video') as HTMLVideoElement;
      return {
        status: bottom('.status'),
        download: bottom('.media-result a.button'),
        video: bottom('.media-result video'),
        portrait: video.videoHeight > video.videoWidth,
      };
    });
    expect(boxes.portrait).toBe(true);
    for (const [what, bottom] of Object.entries(boxes)) if (typeof bottom === 'number') expect(bottom, `${what} within 900 px`).toBeLessThanOrEqual(900);
    const curl = (await page.locator('pre.snippet').first().textContent()) ?? '';
    expect(curl).toContain(`curl -s "${server.url}/v1/video/generations"`);
    expect(curl).not.toContain('MEDIAGATE_BASE_URL');
  });

  it('the history: the model of an image task, a thumbnail per result, reopening restores model and parameters, an empty filter says so', async () => {
    await typeKey(server.keys[1]);
    await field('prompt').fill('reopen me');
    await field('duration').fill('3');
    const video = await generateAndSettle();

    await field('Model').selectOption('vendora/famz-image-spicy-pro');
    await field('prompt').fill('an image with its model');
    const image = await generateAndSettle();
    const imageRow = page.locator(`.history li[data-task="${image}"]`);
    await expect.poll(() => imageRow.locator('.model').getAttribute('title')).toBe('vendora/famz-image-spicy-pro');
    expect(await imageRow.locator('.model').textContent()).toBe('FamZ Image Pro (spicy)');
    await expect.poll(() => imageRow.locator('img.thumb').count()).toBe(1);
    const videoRow = page.locator(`.history li[data-task="${video}"]`);
    await expect.poll(() => videoRow.locator('img.thumb[data-thumb="frame"]').count()).toBe(1);

    await videoRow.getByRole('button', { name: video }).click();
    await expect.poll(() => field('Model').inputValue()).toBe('vendora/famw-2.7-t2v');
    expect(await field('prompt').inputValue()).toBe('reopen me');
    expect(await field('duration').inputValue()).toBe('3');
    expect(await page.locator('.status').textContent()).toContain(video);

    await page.getByLabel('Status filter').selectOption('cancelled');
    await expect.poll(() => page.locator('.history li.empty').textContent()).toBe('No tasks match these filters.');

    // No pricing file: the Usage view counts the tasks and names no amount ("USD 0.00" would say they were priced).
    await page.getByRole('tab', { name: 'Usage', exact: true }).click();
    const usage = page.getByRole('region', { name: 'Usage', exact: true });
    await expect.poll(() => usage.locator('.budget-line').textContent()).toBe('No budget. Nothing spent.');
    expect(await usage.locator('.totals').textContent()).toContain('Costnothing charged');
    expect(await usage.textContent()).not.toMatch(/0\.00|USD/);
  });
});

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Mediagate, MediagateAdmin } from '../src/client/index.js';
import { chromiumAvailability, launchChromium } from './helpers/chromium.js';
import { envKeyId } from './helpers/ledger.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * The console as a model page, in real Chromium against a real server (sandbox renders, a
 * pricing file, a budget on the second key): the picker finds models by part of a name and by
 * input, the price of the run follows its duration and resolution, the budget left is shown,
 * the model card gives the median run time and an example output, and the history names each
 * task by its prompt with a thumbnail whose pixels are a frame, not black. Screenshots go to
 * test-artifacts/console/models-*.png.
 */

const availability = chromiumAvailability();
if (!availability.enabled) console.warn(availability.reason);

const ARTIFACTS = join(import.meta.dirname, '..', 'test-artifacts', 'console');
const ADMIN_KEY = 'mg_test_admin_key_0123456789';
const T2V = 'vendora/famw-2.7-t2v';
const IMAGE = 'vendora/famz-image-spicy';
const PRICING = {
  currency: 'USD',
  models: { [T2V]: { per_task: 0.05, per_second: { '480p': 0.04, '720p': 0.08, '1080p': 0.12 } }, [IMAGE]: { per_image: 0.03 } },
};
/** More video results than Chromium keeps connections per origin (6): each must still show a frame. */
const VIDEOS = 8;
const FAST = { pollInterval: 50, maxPollInterval: 200 } as const;

describe.skipIf(!availability.enabled)('console models, prices and history in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let dir: string;
  let context: BrowserContext | undefined;
  let problems: string[] = [];

  const shot = (page: Page, name: string): Promise<Buffer> => page.screenshot({ path: join(ARTIFACTS, `models-${name}.png`), fullPage: true });

  async function open(key: string): Promise<Page> {
    context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`HTTP ${response.status()} ${new URL(response.url()).pathname}`);
    });
    await page.goto(`${server.url}/console#model=${encodeURIComponent(T2V)}`);
    await page.getByLabel('API key', { exact: true }).fill(key);
    await page.getByLabel('API key', { exact: true }).press('Enter');
    await page.waitForFunction(() => !document.querySelector<HTMLSelectElement>('select')?.disabled);
    return page;
  }

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    dir = await mkdtemp(join(tmpdir(), 'mediagate-console-models-'));
    await writeFile(join(dir, 'pricing.json'), JSON.stringify(PRICING));
    server = await startServer({
      MEDIAGATE_PRICING_FILE: join(dir, 'pricing.json'),
      MEDIAGATE_ADMIN_KEYS: ADMIN_KEY,
      MEDIAGATE_RATE_LIMIT_PER_MIN: '0',
      MEDIAGATE_SANDBOX_FPS: '6',
    });
    // Set before the key's first request: whether a key has a budget is cached for a few seconds.
    await new MediagateAdmin({ baseURL: server.url, apiKey: ADMIN_KEY }).keys.update(envKeyId(server.keys[1]), { budget: 10, budget_period: 'month' });
    const client = new Mediagate({ baseURL: server.url, apiKey: server.keys[1] });
    for (let i = 0; i < VIDEOS; i += 1) {
      await client.videos.createAndWait({ model: T2V, prompt: `a paper boat number ${i + 1} on a pond`, duration: 2, resolution: '480p' }, FAST);
    }
    await client.images.createAndWait({ model: IMAGE, prompt: 'a poster of a lighthouse', size: '512x512' }, FAST);
    browser = await launchChromium();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await context?.close();
    expect(problems.join('\n'), 'errors, warnings or refused requests in the browser').toBe('');
    problems = [];
  });

  it('the picker: part of a name lists the matching models grouped by kind and family; an input chip narrows them; a card chooses', async () => {
    const page = await open(server.keys[0]);
    const cards = page.locator('.picker-list button.model-card');
    await page.getByLabel('Find a model', { exact: true }).pressSequentially('famsd', { delay: 5 });
    await expect
      .poll(() => cards.evaluateAll((all) => all.map((card) => card.getAttribute('data-model'))))
      .toEqual(['vendorb/famsd-2.0-i2v-spicy', 'vendorb/famsd-2.5-i2v-spicy', 'vendorb/famsd-2.0-mini-ref2v-spicy']);
    expect(await page.locator('.picker-group h3').allTextContents()).toEqual(['video · FamSD']);
    expect(await cards.first().textContent()).toContain('FamSD 2.0 Image to Video (spicy)');

    await page.getByLabel('Find a model', { exact: true }).fill('text to video');
    await expect.poll(() => cards.evaluateAll((all) => all.map((card) => card.getAttribute('data-model')))).toEqual([T2V]);
    await page.getByLabel('Find a model', { exact: true }).fill('');
    await page.getByRole('button', { name: 'last frame', exact: true }).click();
    const lastFrame = await cards.evaluateAll((all) => all.map((card) => card.getAttribute('data-model')));
    expect(lastFrame).toContain('vendora/famw-2.7-i2v');
    expect(lastFrame).not.toContain(T2V);
    expect(lastFrame).not.toContain(IMAGE);
    expect(await page.locator('.picker-group h3').allTextContents()).toEqual(['video · FamW', 'video · FamSD', 'video · H3']);
    await shot(page, 'picker');

    await page.locator('.picker-list button[data-model="vendora/famw-2.7-i2v"]').click();
    expect(await page.getByLabel('Model', { exact: true }).inputValue()).toBe('vendora/famw-2.7-i2v');
    expect(await page.locator('.picker-list').isHidden()).toBe(true);
    expect(await page.locator('.model-card-view .model-name').textContent()).toBe('FamW 2.7 Image to Video');
    expect(await page.locator('.model-card-view .about').textContent()).toMatch(/^Animates a still: .* rendered locally by the sandbox engine/);
    // Parameter names in the description are code, not raw backticks.
    expect(await page.locator('.model-card-view .about code').allTextContents()).toEqual(['image', 'end_image', 'prompt_extend']);
    expect(await page.locator('.model-card-view .about').textContent()).not.toContain('`');

    // At 390 px, every model listed: nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'last frame', exact: true }).click();
    await expect.poll(() => page.locator('.picker-list').isVisible()).toBe(true);
    await expect.poll(() => cards.count()).toBe(23);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await shot(page, 'picker-390');
  });

  it('the price of the run follows duration and resolution; the budget left is shown; an unpriced model says so', async () => {
    const page = await open(server.keys[1]);
    const price = page.locator('.estimate .run-price');
    await page.getByLabel('duration', { exact: true }).fill('4');
    await page.getByLabel('resolution', { exact: true }).selectOption('720p');
    await expect.poll(() => price.textContent()).toBe('USD 0.37 (0.05/task + 4 s × 0.08/s)');
    await page.getByLabel('duration', { exact: true }).fill('8');
    await expect.poll(() => price.textContent()).toBe('USD 0.69 (0.05/task + 8 s × 0.08/s)');
    await page.getByLabel('resolution', { exact: true }).selectOption('1080p');
    await expect.poll(() => price.textContent()).toBe('USD 1.01 (0.05/task + 8 s × 0.12/s)');
    // 8 videos of 2 s at 480p (0.05 + 2 x 0.04) and an image (0.03): 1.07 spent of 10.
    await expect.poll(() => page.locator('.estimate .budget-left').textContent()).toBe(' · Budget left: USD 8.93 of 10.00 a month');
    await page.locator('.estimate').scrollIntoViewIfNeeded();
    await shot(page, 'run-price');

    await page.getByLabel('Model', { exact: true }).selectOption('vendorb/famsd-2.0-i2v-spicy');
    await expect.poll(() => price.textContent()).toBe('not priced');
    expect(await page.getByLabel('Model', { exact: true }).locator('option:checked').textContent()).toBe('FamSD 2.0 Image to Video (spicy) — not priced');
    expect(await page.locator('.estimate').textContent()).not.toContain('0.00 (');
  });

  it('the model card: the median run time of the key’s tasks and its newest output; a model without tasks has no example yet', async () => {
    const page = await open(server.keys[1]);
    await expect
      .poll(() => page.locator('.model-card-view .run-time').textContent())
      .toMatch(new RegExp(`^Typical run time: \\d+ m?s \\(median of ${VIDEOS} recent tasks\\)$`));
    const example = page.locator('.model-card-view figure.example');
    await expect.poll(() => example.locator('video').getAttribute('poster')).toMatch(/^data:image\/jpeg;base64,/);
    expect(await example.locator('figcaption').textContent()).toBe(`Example output (your newest): a paper boat number ${VIDEOS} on a pond`);
    await page.getByLabel('Model', { exact: true }).selectOption('vendora/famw-2.7-i2v');
    await expect.poll(() => page.locator('.model-card-view .example').textContent()).toBe('Example output: no example yet.');
    expect(await page.locator('.model-card-view .run-time').textContent()).toBe('Typical run time: no completed task of this key yet');
    const other = await open(server.keys[0]);
    await expect.poll(() => other.locator('.model-card-view .example').textContent()).toBe('Example output: no example yet.');
  });

  it('the history: each row shows prompt, model name, duration and cost; every video thumbnail shows a frame, not black', async () => {
    const page = await open(server.keys[1]);
    const rows = page.locator('.history li[data-task]');
    await expect.poll(() => rows.count()).toBe(VIDEOS + 1);
    const first = rows.first();
    expect(await first.locator('.prompt').textContent()).toBe('a poster of a lighthouse');
    expect(await first.locator('.model').textContent()).toBe('FamZ Image (spicy)');
    expect(await first.locator('.asked').textContent()).toBe('512x512');
    expect(await first.locator('.cost').textContent()).toBe('USD 0.03');
    const video = rows.nth(1);
    expect(await video.locator('.prompt').textContent()).toBe(`a paper boat number ${VIDEOS} on a pond`);
    expect(await video.locator('.model').textContent()).toBe('FamW 2.7 Text to Video');
    expect(await video.locator('.asked').textContent()).toBe('2 s · 480p');
    expect(await video.locator('.cost').textContent()).toBe('USD 0.13');

    // Every video row's thumbnail becomes a still frame; its pixels are read back: not all black.
    await page.waitForFunction((n) => document.querySelectorAll('.history img.thumb[data-thumb="frame"]').length === n, VIDEOS, { timeout: 60_000 });
    // The frames the page shows, decoded here by sharp: the brightest channel of each.
    const sources = await page.locator('.history img.thumb[data-thumb="frame"]').evaluateAll((all) => all.map((img) => img.getAttribute('src') ?? ''));
    const brightness = await Promise.all(
      sources.map(async (src) => {
        const { data } = await sharp(Buffer.from(src.replace(/^data:image\/jpeg;base64,/, ''), 'base64'))
          .raw()
          .toBuffer({ resolveWithObject: true });
        return Math.max(...data);
      }),
    );
    expect(brightness).toHaveLength(VIDEOS);
    for (const value of brightness) expect(value, 'the brightest channel of a thumbnail').toBeGreaterThan(40);
    await page.locator('.history-panel').scrollIntoViewIfNeeded();
    await shot(page, 'history');

    // The cause of the black thumbnails: every progress event of a task this tab follows
    // re-renders the list. A MutationObserver takes the list as each re-render leaves it (its
    // callback runs after the render's synchronous work, however fast the task runs): the 8
    // earlier videos keep showing their frames in every one of them.
    await page.evaluate(() => {
      const seen: number[] = [];
      (window as unknown as { thumbSamples: number[] }).thumbSamples = seen;
      const history = document.querySelector('.history');
      if (!history) throw new Error('no history list');
      new MutationObserver(() => seen.push(history.querySelectorAll('li[data-task] img.thumb[data-thumb="frame"]').length)).observe(history, {
        childList: true,
        subtree: true,
      });
    });
    await page.getByLabel('prompt', { exact: true }).fill('a long boat ride');
    await page.getByLabel('duration', { exact: true }).fill('15');
    await page.getByLabel('resolution', { exact: true }).selectOption('1080p');
    await page.getByRole('button', { name: 'Generate', exact: true }).click();
    await page.waitForFunction(() => document.querySelector('.status')?.getAttribute('data-status') === 'completed', undefined, { timeout: 120_000 });
    const samples = await page.evaluate(() => (window as unknown as { thumbSamples: number[] }).thumbSamples);
    // At least the new task's row and its completion re-render the list.
    expect(samples.length, 're-renders of the history while the task ran').toBeGreaterThanOrEqual(2);
    for (const frames of samples) expect(frames, 'video rows showing a frame in a re-render').toBeGreaterThanOrEqual(VIDEOS);
  });
});

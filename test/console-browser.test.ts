import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateKey } from '../src/auth/api-keys.js';
import { chromiumAvailability, launchChromium } from './helpers/chromium.js';
import { eventually } from './helpers/eventually.js';
import { createInstantEngine } from '../src/engines/instant.js';
import type { Engine } from '../src/engines/types.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';

/**
 * The console in real Chromium, as a person uses it: paste the key, pick a model, fill the
 * generated form, press Generate, watch the progress, see the result play. Each test has a page
 * of its own (a fresh browser context: its own sessionStorage), so none depends on another's
 * order; each ends with no error or warning in its browser console. Screenshots of each step go
 * to test-artifacts/console/.
 */

const availability = chromiumAvailability();
if (!availability.enabled) console.warn(availability.reason);

const ARTIFACTS = join(import.meta.dirname, '..', 'test-artifacts', 'console');

interface VideoState {
  readyState: number;
  width: number;
  height: number;
  duration: number;
}

describe.skipIf(!availability.enabled)('console in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[] = [];
  let created: string[] = [];
  let step = 0;

  const watchErrors = (target: Page): void => {
    target.on('console', (message: ConsoleMessage) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()} (${message.location().url})`);
    });
    target.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    target.on('response', (response) => {
      if (response.status() >= 400)
        void response.text().then(
          (text) => problems.push(`HTTP ${response.status()} ${response.url()}: ${text.slice(0, 300)}`),
          () => undefined,
        );
    });
  };
  const shot = async (name: string, target: Page = page): Promise<void> => {
    step += 1;
    await target.screenshot({ path: join(ARTIFACTS, `${String(step).padStart(2, '0')}-${name}.png`), fullPage: true });
  };
  const field = (name: string) => page.getByLabel(name, { exact: true });

  /** Submits, and returns the progress values seen until the task ended, and its id. */
  async function generate(): Promise<{ id: string; seen: number[]; status: string }> {
    await page.evaluate(() => {
      const w = window as unknown as { seenProgress: number[] };
      w.seenProgress = [];
      const bar = document.querySelector('progress');
      if (!bar) return;
      new MutationObserver(() => w.seenProgress.push(Number(bar.value))).observe(bar, { attributes: true });
    });
    const before = await page.locator('.status').textContent();
    // From the keyboard: a click right after a full-page screenshot can land while the page is still being laid out again.
    await page.getByRole('button', { name: 'Generate', exact: true }).press('Enter');
    await page
      .waitForFunction(
        (text) =>
          document.querySelector('.error:not([hidden])') !== null ||
          (document.querySelector('.status')?.textContent !== text && /^(vid|img)_|^Refused|failed/.test(document.querySelector('.status')?.textContent ?? '')),
        before,
        { timeout: 15_000 },
      )
      .catch(async (error: unknown) => {
        await shot('stuck');
        console.log(await page.locator('.status').textContent(), await page.evaluate(() => document.activeElement?.outerHTML));
        throw error;
      });
    const now = (await page.locator('.status').textContent()) ?? '';
    if (!/^(vid|img)_/.test(now)) {
      const errors = await page.locator('.error:not([hidden]), .refusal pre').allTextContents();
      throw new Error(`not created: ${now} ${errors.join(' | ')}`);
    }
    await shot('submitted');
    await page.waitForFunction(
      () => ['completed', 'failed', 'cancelled'].includes(document.querySelector<HTMLElement>('.status')?.dataset['status'] ?? ''),
      null,
      { timeout: 60_000 },
    );
    const status = (await page.locator('.status').getAttribute('data-status')) ?? '';
    const id = ((await page.locator('.status').textContent()) ?? '').split(':')[0] ?? '';
    const seen = await page.evaluate(() => (window as unknown as { seenProgress: number[] }).seenProgress);
    created.push(id);
    return { id, seen, status };
  }

  /** The result's player on the console (not a history thumbnail), or the only video of a page that is the output itself. */
  async function videoState(target: Page = page): Promise<VideoState> {
    await target.waitForFunction(
      () => (document.querySelector<HTMLVideoElement>('.media-result video') ?? document.querySelector('video'))?.readyState === 4,
      null,
      {
        timeout: 30_000,
      },
    );
    return target.evaluate(() => {
      const video = (document.querySelector<HTMLVideoElement>('.media-result video') ?? document.querySelector('video')) as HTMLVideoElement;
      return { readyState: video.readyState, width: video.videoWidth, height: video.videoHeight, duration: video.duration };
    });
  }

  const expectAdvanced = (seen: number[]): void => {
    expect(seen.at(-1)).toBe(100);
    expect(new Set(seen).size).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < seen.length; i += 1) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1] ?? 0);
  };

  async function pickModel(id: string): Promise<void> {
    await field('Model').selectOption(id);
    await page.waitForFunction((model) => location.hash === `#model=${encodeURIComponent(model)}`, id);
  }

  beforeAll(async () => {
    // This file's screenshots only: the usage and keys specs (console-usage-browser) write beside them.
    await mkdir(ARTIFACTS, { recursive: true });
    for (const name of await readdir(ARTIFACTS)) if (/^(\d{2}|history|pricing)-/.test(name)) await rm(join(ARTIFACTS, name), { force: true });
    server = await startServer({ MEDIAGATE_SANDBOX_FPS: '6' });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  // A page of its own per test, the key entered.
  beforeEach(async () => {
    problems = [];
    created = [];
    context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    page = await context.newPage();
    watchErrors(page);
    await page.goto(`${server.url}/`);
    expect(new URL(page.url()).pathname).toBe('/console');
    await field('API key').fill(server.keys[0]);
    await field('API key').press('Enter');
    await page.waitForFunction(() => !document.querySelector('select')?.disabled);
  });

  afterEach(async () => {
    await context?.close();
    expect(problems.join('\n'), 'errors or warnings in the browser console').toBe('');
  });

  it('keeps the key in sessionStorage only, and labels every control', async () => {
    await shot('key-entered');
    expect(await page.evaluate(() => sessionStorage.getItem('mediagate.apiKey'))).toBe(server.keys[0]);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, textarea')]
        .filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.getAttribute('aria-label'))
        .map((el) => el.outerHTML),
    );
    expect(unlabelled).toEqual([]);
    // Keyboard: from the key field, Tab reaches the model finder, then (past Browse and the input
    // chips) the model select, then the first parameter.
    await field('API key').focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe(await field('Find a model').getAttribute('id'));
    const modelId = await field('Model').getAttribute('id');
    for (let i = 0; i < 6 && (await page.evaluate(() => document.activeElement?.id)) !== modelId; i += 1) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe(modelId);
    // Then (past the model's reference link) the first parameter.
    const promptId = await field('prompt').getAttribute('id');
    for (let i = 0; i < 3 && (await page.evaluate(() => document.activeElement?.id)) !== promptId; i += 1) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe(promptId);
  });

  it('a video model: the form, progress, the video playing at the requested size and duration', async () => {
    await pickModel('vendora/famw-2.7-t2v');
    await field('prompt').fill('a red fox running through snow');
    await field('duration').fill('2');
    await field('resolution').selectOption('480p');
    await field('aspect_ratio').selectOption('9:16');
    expect(await page.locator('#' + (await field('duration').getAttribute('id'))).getAttribute('max')).toBe('15');
    await shot('video-form');
    const { id, seen, status } = await generate();
    expect(status).toBe('completed');
    expectAdvanced(seen);
    const video = await videoState();
    expect(video).toMatchObject({ readyState: 4, width: 480, height: 854 });
    expect(Math.abs(video.duration - 2)).toBeLessThan(0.15);
    await expect.poll(() => page.locator('pre.snippet').first().textContent()).toContain(`"${server.url}/v1/video/generations"`);
    expect(await page.getByRole('link', { name: 'Download', exact: true }).getAttribute('download')).toBe(`${id}.mp4`);
    expect(await page.locator('pre.json').first().textContent()).toContain(`"id": "${id}"`);
    await shot('video-result');

    // The output URL opened on its own plays: the files route's CSP lets the media document load it.
    const url = (await page.locator('.media-result video').getAttribute('src')) ?? '';
    const direct = await context.newPage();
    watchErrors(direct);
    await direct.goto(url);
    expect((await videoState(direct)).width).toBe(480);
    await shot('output-url-video', direct);
    await direct.close();
  });

  it('an image model: size instead of width and height, the image at its size', async () => {
    await pickModel('vendora/famz-image-spicy-pro');
    await field('prompt').fill('a lighthouse at dusk');
    await expect.poll(() => field('size').isDisabled()).toBe(true);
    await page.getByLabel('size (WIDTHxHEIGHT)', { exact: true }).check();
    expect(await field('width').isDisabled()).toBe(true);
    await field('size').fill('384x256');
    await shot('image-form');
    const { status, seen } = await generate();
    expect(status).toBe('completed');
    expectAdvanced(seen);
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('.media-result img');
      return img?.complete === true && img.naturalWidth > 0;
    });
    expect(
      await page.evaluate(() => [
        (document.querySelector('.media-result img') as HTMLImageElement).naturalWidth,
        (document.querySelector('.media-result img') as HTMLImageElement).naturalHeight,
      ]),
    ).toEqual([384, 256]);
    await shot('image-result');

    const url = (await page.locator('.media-result img').getAttribute('src')) ?? '';
    const direct = await context.newPage();
    watchErrors(direct);
    await direct.goto(url);
    await direct.waitForFunction(() => (document.querySelector('img')?.naturalWidth ?? 0) > 0);
    expect(await direct.evaluate(() => document.querySelector('img')?.naturalWidth)).toBe(384);
    await direct.close();
  });

  it('an image-to-video model with a file upload', async () => {
    await pickModel('vendord/v6/image-to-video');
    const png = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#3366aa' } })
      .png()
      .toBuffer();
    await field('prompt').fill('the waves roll in');
    await field('image file').setInputFiles({ name: 'first-frame.png', mimeType: 'image/png', buffer: png });
    await expect.poll(() => page.locator('[data-param=image] .size').textContent()).toContain('first-frame.png');
    expect(await page.locator('[data-param=image] .size').textContent()).toContain('image at most 10.0 MiB');
    await field('duration').fill('1');
    await field('resolution').selectOption('360p');
    await shot('i2v-form');
    const { status, seen } = await generate();
    expect(status).toBe('completed');
    expectAdvanced(seen);
    const video = await videoState();
    // No aspect_ratio on this model: the image's 4:3 snapped to the nearest listed ratio, 16:9 (decisions §6).
    expect(video).toMatchObject({ readyState: 4, width: 640, height: 360 });
    expect(Math.abs(video.duration - 1)).toBeLessThan(0.15);
    await shot('i2v-result');
  });

  it('the reference model with images and extra.image_options', async () => {
    await pickModel('vendord/v6/reference-to-video');
    const cat = await sharp({ create: { width: 320, height: 320, channels: 3, background: '#aa6633' } })
      .png()
      .toBuffer();
    const room = await sharp({ create: { width: 320, height: 320, channels: 3, background: '#33aa66' } })
      .png()
      .toBuffer();
    await field('prompt').fill('@image1 sits in @image2');
    await field('images[0] file').setInputFiles({ name: 'cat.png', mimeType: 'image/png', buffer: cat });
    await page.getByRole('button', { name: 'Add images item' }).click();
    await field('images[1] file').setInputFiles({ name: 'room.png', mimeType: 'image/png', buffer: room });
    await page.getByRole('button', { name: 'Add image_options item' }).click();
    await field('image_options[0].type').selectOption('subject');
    await field('image_options[0].ref_name').fill('cat');
    await page.getByRole('button', { name: 'Add image_options item' }).click();
    await field('image_options[1].type').selectOption('background');
    await field('image_options[1].ref_name').fill('room');
    await field('aspect_ratio').selectOption('1:1');
    await field('resolution').selectOption('360p');
    await field('duration').fill('1');
    await expect.poll(() => page.locator('[data-param=images] .size').count()).toBe(2);
    await shot('reference-form');
    const { status, seen } = await generate();
    expect(status).toBe('completed');
    expectAdvanced(seen);
    const sdk = await page.locator('pre.snippet').nth(1).textContent();
    expect(sdk).toContain('"image_options"');
    expect(sdk).toContain('"ref_name": "cat"');
    const video = await videoState();
    expect(video).toMatchObject({ readyState: 4, width: 360, height: 360 });
    expect(Math.abs(video.duration - 1)).toBeLessThan(0.15);
    await shot('reference-result');
  });

  it('a refused value is shown beside its field, by the browser and then by the server, alike', async () => {
    await pickModel('vendora/famw-2.7-t2v');
    await field('prompt').fill('a fox');
    await field('duration').fill('99');
    const tasksBefore = created.length;
    await page.getByRole('button', { name: 'Generate', exact: true }).press('Enter');
    const error = page.locator('[data-param=duration] .error');
    await expect.poll(() => error.textContent()).toBe("'duration' must be <= 15; got 99.");
    expect(await error.isVisible()).toBe(true);
    await shot('refused-in-browser');

    // From the keyboard, as Generate is pressed: a click right after a full-page screenshot can land mid-layout.
    await page.getByLabel('Check in the browser first', { exact: true }).press('Space');
    expect(await page.getByLabel('Check in the browser first', { exact: true }).isChecked()).toBe(false);
    const before = problems.length;
    await page.getByRole('button', { name: 'Generate', exact: true }).press('Enter');
    await expect.poll(() => page.locator('.refusal').isVisible()).toBe(true);
    // Chromium logs every 4xx answer to a fetch as an error: this one is the refusal asked for.
    // Two entries: the browser's console error and the answer itself (recorded above).
    await expect.poll(() => problems.length).toBeGreaterThanOrEqual(before + 2);
    const expected = problems.splice(before).filter((p) => !/400/.test(p) || !p.includes('/v1/video/generations'));
    problems.push(...expected);
    const raw = JSON.parse((await page.locator('.refusal pre').textContent()) ?? '{}') as { error: { code: string; param: string; message: string } };
    expect(raw.error).toMatchObject({ code: 'unsupported_value', param: 'duration' });
    expect(await error.textContent()).toBe(raw.error.message);
    await shot('refused-by-server');
    await page.getByLabel('Check in the browser first', { exact: true }).press('Space');
    expect(await page.getByLabel('Check in the browser first', { exact: true }).isChecked()).toBe(true);
    expect(created.length).toBe(tasksBefore);
  });

  it('the history lists a task made on the page first', async () => {
    await pickModel('vendora/famz-image-spicy-pro');
    await field('prompt').fill('a small boat');
    await page.getByLabel('size (WIDTHxHEIGHT)', { exact: true }).check();
    await field('size').fill('384x256');
    const { id, status } = await generate();
    expect(status).toBe('completed');
    await expect.poll(() => page.locator('.history li[data-task]').first().getAttribute('data-task')).toBe(id);
    // This server has no pricing file: a completed task shows no "USD 0.00".
    await expect.poll(() => page.locator('.history li[data-task]').first().getAttribute('data-status')).toBe('completed');
    expect(await page.locator('.history li[data-task] .cost').count()).toBe(0);
    await page.locator('.history button.link').first().focus();
    await shot('history');
  });

  it('at 390 px wide: no horizontal scrolling, on every model', async () => {
    const narrow = await context.newPage();
    await narrow.setViewportSize({ width: 390, height: 844 });
    watchErrors(narrow);
    await narrow.goto(`${server.url}/console#model=${encodeURIComponent('vendord/v6/reference-to-video')}`);
    // Session storage is per page: the key is entered again.
    await narrow.getByLabel('API key', { exact: true }).fill(server.keys[0]);
    await narrow.getByLabel('API key', { exact: true }).press('Enter');
    await narrow.waitForFunction(() => location.hash.includes('reference-to-video') && document.querySelector('[data-param=extra]') !== null);
    const models = await narrow
      .getByLabel('Model', { exact: true })
      .locator('option')
      .evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
    expect(models).toHaveLength(23);
    for (const model of models) {
      await narrow.getByLabel('Model', { exact: true }).selectOption(model);
      const overflow = await narrow.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, model).toBe(0);
    }
    await shot('narrow-390', narrow);
  });
});

/**
 * The history as the list operation gives it (decisions §8.2) and Cancel (decisions §8.1), in Chromium:
 * 25 tasks of two models made through the API, one of them held running. The page lists them
 * newest first, pages with Load more without duplicates, filters by status and by model, and
 * its Cancel button cancels a running task (one of a key of its own, so that the 25 stay as they
 * are whatever order the tests run in). Each test has its own page. Screenshots:
 * test-artifacts/console/history-*.
 */
describe.skipIf(!availability.enabled)('console history and cancel in Chromium', () => {
  const KEY = TEST_KEYS[1];
  const MODELS = ['vendora/famw-2.7-t2v', 'vendora/famw-3.0-ref2v-spicy'] as const;
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[] = [];
  const ids: string[] = [];
  const modelOf = new Map<string, string>();
  let held = '';
  let step = 0;

  /** Instant renders, except a prompt with `[hold]`: it runs until cancelled. */
  const holding = (inner: Engine): Engine => ({
    name: 'holding',
    async render(job) {
      if (String(job.params['prompt']).includes('[hold]')) {
        await new Promise((_resolve, reject) => job.signal.addEventListener('abort', () => reject(job.signal.reason as Error), { once: true }));
      }
      return inner.render(job);
    },
    close: () => inner.close(),
  });
  const api = (path: string, init: RequestInit = {}, key: string = KEY) =>
    fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
  const statusOf = async (id: string, key: string = KEY) => ((await (await api(`/v1/video/generations/${id}`, {}, key)).json()) as { status: string }).status;
  /** A page of the console in this test's context, the key entered, once its history has rows. */
  const openConsole = async (key: string, viewport = { width: 1440, height: 1000 }): Promise<Page> => {
    const opened = await context.newPage();
    await opened.setViewportSize(viewport);
    opened.on('console', (message: ConsoleMessage) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()} (${message.location().url})`);
    });
    opened.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    opened.on('response', (response) => {
      if (response.status() >= 400) problems.push(`HTTP ${response.status()} ${response.url()}`);
    });
    await opened.goto(`${server.url}/console`);
    await opened.getByLabel('API key', { exact: true }).fill(key);
    await opened.getByLabel('API key', { exact: true }).press('Enter');
    await opened.waitForFunction(() => document.querySelectorAll('.history li[data-task]').length > 0);
    return opened;
  };
  const shot = async (name: string, target: Page = page): Promise<void> => {
    step += 1;
    await target.screenshot({ path: join(ARTIFACTS, `history-${String(step).padStart(2, '0')}-${name}.png`), fullPage: true });
  };
  const listedIds = (target: Page = page) =>
    target.locator('.history li[data-task]').evaluateAll((items) => items.map((li) => li.getAttribute('data-task') ?? ''));
  const newestFirst = (list: readonly string[]) => [...list].sort((a, b) => (a.slice(4) < b.slice(4) ? 1 : a.slice(4) > b.slice(4) ? -1 : 0));

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    server = await startServer({}, { engine: holding(createInstantEngine()) });
    // 24 that complete (alternating models), then the held one.
    for (let n = 0; n < 25; n += 1) {
      const model = MODELS[n % 2] ?? MODELS[0];
      const prompt = n === 24 ? 'a long take [hold]' : `history task ${n}`;
      const res = await api('/v1/video/generations', { method: 'POST', body: JSON.stringify({ model, prompt }) });
      expect(res.status).toBe(200);
      const id = ((await res.json()) as { id: string }).id;
      ids.push(id);
      modelOf.set(id, model);
      if (n === 24) held = id;
    }
    await eventually(async () => (await Promise.all(ids.map((id) => statusOf(id)))).filter((s) => s === 'completed').length === 24, {
      deadline: 30_000,
      what: '24 tasks to complete',
    });
    await eventually(async () => (await statusOf(held)) === 'processing', { deadline: 10_000, what: 'the held task to run' });

    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    // The held task would otherwise hold the close for its drain.
    if (held) await api(`/v1/video/generations/${held}/cancel`, { method: 'POST' }).catch(() => undefined);
    await server?.close();
  });

  beforeEach(async () => {
    problems = [];
    context = await browser.newContext();
    page = await openConsole(KEY);
  });

  afterEach(async () => {
    await context?.close();
    expect(problems.join('\n'), 'errors, warnings or refused requests in the browser').toBe('');
  });

  it('lists the tasks of the key newest first, and Load more shows the rest without duplicates', async () => {
    const first = await listedIds();
    expect(first).toHaveLength(20);
    expect(first).toEqual(newestFirst(ids).slice(0, 20));
    expect(await page.locator(`.history li[data-task="${held}"]`).getAttribute('data-status')).toBe('processing');
    await shot('first-page');
    await page.getByRole('button', { name: 'Load more', exact: true }).click();
    await expect.poll(async () => (await listedIds()).length).toBe(25);
    const all = await listedIds();
    expect(new Set(all).size).toBe(25);
    expect(all).toEqual(newestFirst(ids));
    expect(await page.getByRole('button', { name: 'Load more', exact: true }).isVisible()).toBe(false);
    await shot('all-pages');
  });

  it('filters by status and by model', async () => {
    await page.getByLabel('Status filter', { exact: true }).selectOption('processing');
    await expect.poll(() => listedIds()).toEqual([held]);
    await shot('filter-processing');

    await page.getByLabel('Status filter', { exact: true }).selectOption('completed');
    await expect.poll(async () => (await listedIds()).length).toBe(20);
    await page.getByRole('button', { name: 'Load more', exact: true }).click();
    await expect.poll(async () => (await listedIds()).length).toBe(24);
    expect(await listedIds()).toEqual(newestFirst(ids.filter((id) => id !== held)));

    await page.getByLabel('Status filter', { exact: true }).selectOption('');
    const model = MODELS[1];
    await page.getByLabel('Model filter', { exact: true }).selectOption(model);
    const ofModel = newestFirst(ids.filter((id) => modelOf.get(id) === model));
    await expect.poll(() => listedIds()).toEqual(ofModel);
    // The row names the model by its display name, its id in the title.
    const shown = await page.locator('.history li[data-task] .model').evaluateAll((all) => all.map((el) => el.getAttribute('title')));
    expect(new Set(shown)).toEqual(new Set([model]));
    await shot('filter-model');

    await page.getByLabel('Model filter', { exact: true }).selectOption('');
    await expect.poll(async () => (await listedIds()).length).toBe(20);
  });

  it('Cancel on a running task shows it cancelled, and the API agrees', async () => {
    // A key of its own: its one task, held running, is this test's to cancel.
    const key = generateKey();
    await server.app.keys.create(key, 'cancel in the console');
    const res = await api('/v1/video/generations', { method: 'POST', body: JSON.stringify({ model: MODELS[0], prompt: 'cancel me [hold]' }) }, key);
    expect(res.status).toBe(200);
    const id = ((await res.json()) as { id: string }).id;
    await eventually(async () => (await statusOf(id, key)) === 'processing', { deadline: 10_000, what: 'the held task to run' });
    const own = await openConsole(key);
    const row = own.locator(`.history li[data-task="${id}"]`);
    await expect.poll(() => row.getAttribute('data-status')).toBe('processing');
    await row.getByRole('button', { name: 'Cancel', exact: true }).click();
    await expect.poll(() => row.getAttribute('data-status')).toBe('cancelled');
    expect(await row.locator('.badge').textContent()).toMatch(/^cancelled/);
    expect(await row.getByRole('button', { name: 'Cancel', exact: true }).count()).toBe(0);
    expect(await statusOf(id, key)).toBe('cancelled');
    await shot('cancelled', own);
  });

  it('at 390 px wide, the history has no horizontal scrolling', async () => {
    const narrow = await openConsole(KEY, { width: 390, height: 844 });
    await narrow.waitForFunction(() => document.querySelectorAll('.history li[data-task]').length === 20);
    await narrow.getByRole('button', { name: 'Load more', exact: true }).click();
    await expect.poll(async () => (await listedIds(narrow)).length).toBe(25);
    await narrow.getByLabel('Model filter', { exact: true }).selectOption(MODELS[1]);
    await expect.poll(async () => (await listedIds(narrow)).length).toBe(12);
    expect(await narrow.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await narrow.locator('.history-panel').scrollIntoViewIfNeeded();
    await shot('narrow-390', narrow);
  });
});

/** With a pricing file, the model picker shows each model's price beside its id, and the model's line repeats it. */
describe.skipIf(!availability.enabled)('console model prices in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let pricingDir: string;

  beforeAll(async () => {
    pricingDir = await mkdtemp(join(tmpdir(), 'mediagate-console-pricing-'));
    const file = join(pricingDir, 'pricing.json');
    await writeFile(
      file,
      JSON.stringify({
        currency: 'USD',
        models: {
          'vendora/famw-2.7-t2v': { per_task: 0.05, per_second: { '480p': 0.04, '720p': 0.08, '1080p': 0.12 } },
          '*': { per_image: 0.03, per_second: 0.1 },
        },
      }),
    );
    server = await startServer({ MEDIAGATE_PRICING_FILE: file });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await rm(pricingDir, { recursive: true, force: true });
  });

  it('each option and the model line show the price; nothing overflows at 390 px', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${server.url}/console#model=${encodeURIComponent('vendora/famw-2.7-t2v')}`);
    await page.getByLabel('API key', { exact: true }).fill(server.keys[0]);
    await page.getByLabel('API key', { exact: true }).press('Enter');
    await page.waitForFunction(() => !document.querySelector('select')?.disabled);
    const labels = await page
      .getByLabel('Model', { exact: true })
      .locator('option')
      .evaluateAll((options) => Object.fromEntries(options.map((o) => [(o as HTMLOptionElement).value, o.textContent ?? ''])));
    expect(labels['vendora/famw-2.7-t2v']).toBe('FamW 2.7 Text to Video — USD 0.05/task + 0.04/s (480p), 0.08/s (720p), 0.12/s (1080p)');
    expect(labels['vendora/famz-image-spicy']).toBe('FamZ Image (spicy) — USD 0.03/image');
    expect(await page.locator('.about').first().textContent()).toContain('USD 0.05/task + 0.04/s (480p)');
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });
});

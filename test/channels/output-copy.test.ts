import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyOutput, looksLike } from '../../src/channels/output-copy.js';
import { dashscopeAdapter } from '../../src/channels/protocols/dashscope.js';
import { adapterContext, videoJob, type TestContext } from '../fakes/adapter-context.js';
import { startDashscopeFake, type DashscopeFake } from '../fakes/dashscope.js';
import { TINY_MP4, TINY_PNG } from '../fakes/upstream-kit.js';

const KEY = 'sk-copy';
let fake: DashscopeFake;
let ctx: TestContext;
let now = Date.now();
const dir = mkdtempSync(join(tmpdir(), 'mg-copy-'));
let n = 0;
const dest = (): string => join(dir, `out-${(n += 1)}`);

beforeAll(async () => {
  fake = await startDashscopeFake({ apiKey: KEY, clock: () => now, queuedMs: 0, runMs: 10, outputTtlMs: 60_000 });
  ctx = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'wan2.7-i2v' });
});
afterAll(async () => {
  await ctx.close();
  await fake.close();
});

async function outputUrl(prompt: string): Promise<string> {
  const submitted = await dashscopeAdapter.submit(ctx, videoJob({ prompt, image: 'https://e.com/a.png' }));
  if (submitted.outcome !== 'accepted') throw new Error(JSON.stringify(submitted));
  now += 1000;
  const done = await dashscopeAdapter.poll(ctx, submitted.upstreamId);
  if (done.state !== 'succeeded') throw new Error(JSON.stringify(done));
  return done.outputs[0]!.url;
}

describe('output copy', () => {
  it('recognises MP4 and PNG by their bytes', () => {
    expect(looksLike('video', TINY_MP4)).toBe(true);
    expect(looksLike('image', TINY_PNG)).toBe(true);
    expect(looksLike('video', TINY_PNG)).toBe(false);
    expect(looksLike('image', TINY_MP4)).toBe(false);
    expect(looksLike('video', Buffer.from('<html><body>AccessDenied</body></html>'))).toBe(false);
  });

  it('copies an output of the channel origin byte for byte', async () => {
    const path = dest();
    const outcome = await copyOutput(await outputUrl('ok'), { channelBaseUrl: fake.origin, expect: 'video', destination: path });
    expect(outcome).toEqual({ ok: true, bytes: TINY_MP4.length, contentType: 'video/mp4' });
    expect(readFileSync(path).equals(TINY_MP4)).toBe(true);
  });

  it.each([
    ['[fake:not-media]', 'video', false, /not an MP4 video/],
    ['[fake:missing-output]', 'video', false, /HTTP 404/],
    ['', 'image', false, /not a PNG image/],
  ] as const)('output %s expected as %s fails output_invalid', async (marker, expect_, transient, message) => {
    const path = dest();
    const outcome = await copyOutput(await outputUrl(`x ${marker}`), { channelBaseUrl: fake.origin, expect: expect_, destination: path });
    expect(outcome).toMatchObject({ ok: false, transient, error: { code: 'output_invalid' } });
    if (!outcome.ok) expect(outcome.error.message).toMatch(message);
    expect(existsSync(path)).toBe(false);
  });

  it('an expired output URL is output_invalid (403), not transient', async () => {
    const url = await outputUrl('exp');
    now += 120_000;
    const outcome = await copyOutput(url, { channelBaseUrl: fake.origin, expect: 'video', destination: dest() });
    expect(outcome).toMatchObject({ ok: false, transient: false, error: { code: 'output_invalid' } });
    if (!outcome.ok) expect(outcome.error.message).toMatch(/HTTP 403/);
  });

  it('an output over the size cap is cut and refused', async () => {
    const path = dest();
    const outcome = await copyOutput(await outputUrl('big'), { channelBaseUrl: fake.origin, expect: 'video', destination: path, maxBytes: 100 });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'output_invalid' } });
    if (!outcome.ok) expect(outcome.error.message).toMatch(/at most 100/);
    expect(existsSync(path)).toBe(false);
  });

  describe('off the channel origin', () => {
    let redirector: Server;
    let redirectOrigin = '';
    beforeAll(async () => {
      redirector = createServer((req, res) => res.writeHead(302, { location: `${fake.origin}${req.url ?? '/'}` }).end());
      await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
      redirectOrigin = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      redirector.closeAllConnections();
      await new Promise<void>((resolve) => redirector.close(() => resolve()));
    });

    it('a URL on another host goes through the fetch policy (http and loopback refused)', async () => {
      const url = await outputUrl('other');
      const outcome = await copyOutput(url, { channelBaseUrl: 'https://upstream.example', expect: 'video', destination: dest() });
      expect(outcome).toMatchObject({ ok: false, transient: false, error: { code: 'output_invalid' } });
      if (!outcome.ok) expect(outcome.error.message).toMatch(/only https/);
    });

    it('a redirect from the channel origin to another host is policed too', async () => {
      const url = new URL(await outputUrl('hop'));
      const outcome = await copyOutput(`${redirectOrigin}${url.pathname}${url.search}`, {
        channelBaseUrl: redirectOrigin,
        expect: 'video',
        destination: dest(),
      });
      expect(outcome).toMatchObject({ ok: false, error: { code: 'output_invalid' } });
    });
  });
});

/**
 * An expired output URL says so (`url_expired`, not a bad signature), and the Cache-Control of
 * a file never lets a cache keep it past the URL's expiry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { startServer, type TestServer } from './helpers/server.js';

describe('output URL expiry', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_ENGINE: 'instant', MEDIAGATE_OUTPUT_TTL_S: '3' });
  });
  afterAll(async () => server.close());

  it('serves with a max-age within the URL lifetime, then answers url_expired', async () => {
    const auth = { authorization: `Bearer ${server.keys[0]}` };
    const created = await fetch(`${server.url}/v1/video/generations`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'expiry', duration: 2 }),
    });
    const id = String(((await created.json()) as Record<string, unknown>)['id']);
    let url = '';
    await eventually(
      async () => {
        const task = (await (await fetch(`${server.url}/v1/video/generations/${id}`, { headers: auth })).json()) as { outputs?: { url: string }[] };
        url = task.outputs?.[0]?.url ?? '';
        return url !== '';
      },
      { deadline: 10_000, interval: 20, what: 'an output URL' },
    );
    const exp = Number(new URL(url).searchParams.get('exp'));
    const served = await fetch(url);
    expect(served.status).toBe(200);
    await served.arrayBuffer();
    const maxAge = Number(/max-age=(\d+)/.exec(served.headers.get('cache-control') ?? '')?.[1] ?? 'NaN');
    expect(maxAge).toBeGreaterThanOrEqual(0);
    expect(Math.floor(Date.now() / 1000) + maxAge).toBeLessThanOrEqual(exp);

    let expired: Response | undefined;
    await eventually(
      async () => {
        expired = await fetch(url);
        return expired.status !== 200 || (await expired.arrayBuffer(), false);
      },
      { deadline: 10_000, interval: 100, what: 'the URL to expire' },
    );
    expect(expired?.status).toBe(403);
    expect(await expired?.json()).toMatchObject({ error: { code: 'url_expired', param: 'exp' } });

    // A forged signature stays invalid_signature, expired or not: only our own URLs say expired.
    const forged = new URL(url);
    forged.searchParams.set('sig', 'A'.repeat(43));
    const bad = await fetch(forged);
    expect(bad.status).toBe(403);
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_signature' } });
  });
});

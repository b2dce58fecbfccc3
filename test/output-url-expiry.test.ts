/**
 * An expired output URL says so (`url_expired`, not a bad signature), and the Cache-Control of
 * a file never lets a cache keep it past the URL's expiry. Its message does not send the client
 * back to the task for a fresh URL: a poll answers the same URL. Only the canonical spelling of
 * `exp` verifies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { startServer, type TestServer } from './helpers/server.js';

async function outputUrl(server: TestServer, id: string): Promise<string> {
  const auth = { authorization: `Bearer ${server.keys[0]}` };
  const task = (await (await fetch(`${server.url}/v1/video/generations/${id}`, { headers: auth })).json()) as { outputs?: { url: string }[] };
  return task.outputs?.[0]?.url ?? '';
}

async function completedTask(server: TestServer): Promise<{ id: string; url: string }> {
  const created = await fetch(`${server.url}/v1/video/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'expiry', duration: 2 }),
  });
  const id = String(((await created.json()) as Record<string, unknown>)['id']);
  let url = '';
  await eventually(async () => (url = await outputUrl(server, id)) !== '', { deadline: 10_000, interval: 20, what: 'an output URL' });
  return { id, url };
}

describe('output URL expiry', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_ENGINE: 'instant', MEDIAGATE_OUTPUT_TTL_S: '3' });
  });
  afterAll(async () => server.close());

  it('serves with a max-age within the URL lifetime, then answers url_expired', async () => {
    const { id, url } = await completedTask(server);
    const exp = Number(new URL(url).searchParams.get('exp'));
    // Read before the request: the server's own second is this one or a later one, so a max-age
    // it counts from its second, added to this one, stays within the URL's lifetime.
    const askedAt = Math.floor(Date.now() / 1000);
    const served = await fetch(url);
    expect(served.status).toBe(200);
    await served.arrayBuffer();
    const maxAge = Number(/max-age=(\d+)/.exec(served.headers.get('cache-control') ?? '')?.[1] ?? 'NaN');
    expect(maxAge).toBeGreaterThanOrEqual(0);
    expect(askedAt + maxAge).toBeLessThanOrEqual(exp);

    let expired: Response | undefined;
    await eventually(
      async () => {
        expired = await fetch(url);
        return expired.status !== 200 || (await expired.arrayBuffer(), false);
      },
      { deadline: 10_000, interval: 100, what: 'the URL to expire' },
    );
    expect(expired?.status).toBe(403);
    const refusal = (await expired?.json()) as { error: { code: string; param: string; message: string } };
    expect(refusal).toMatchObject({ error: { code: 'url_expired', param: 'exp' } });
    // The task answers the very same URL after expiry, so the message must not promise a fresh one.
    expect(await outputUrl(server, id)).toBe(url);
    expect(refusal.error.message).not.toMatch(/fresh|fetch the task again/i);
    expect(refusal.error.message).toMatch(/create the task again/);

    // A forged signature stays invalid_signature, expired or not: only our own URLs say expired.
    const forged = new URL(url);
    forged.searchParams.set('sig', 'A'.repeat(43));
    const bad = await fetch(forged);
    expect(bad.status).toBe(403);
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_signature' } });
  });
});

describe('output URL exp spelling', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_ENGINE: 'instant' });
  });
  afterAll(async () => server.close());

  it('verifies only the canonical exp: a leading zero or sign with the same signature is invalid_signature', async () => {
    const { url } = await completedTask(server);
    const served = await fetch(url);
    expect(served.status).toBe(200);
    await served.arrayBuffer();
    const exp = new URL(url).searchParams.get('exp') ?? '';
    for (const spelling of [`0${exp}`, `00${exp}`, `+${exp}`]) {
      const altered = new URL(url);
      altered.searchParams.set('exp', spelling);
      const answer = await fetch(altered);
      expect(answer.status, spelling).toBe(403);
      expect(await answer.json()).toMatchObject({ error: { code: 'invalid_signature' } });
    }
  });
});

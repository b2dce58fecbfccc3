/**
 * URLs in `images`, `videos`, `audios` (and `audio`) meet the address policy `image` meets: a
 * loopback or metadata address fails the task with `input_refused`, param the field, while the
 * operator's allow-list and public addresses pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FetchError } from '../src/outbound/client.js';
import { assertPublicUrl } from '../src/outbound/url-refusal.js';
import { eventually } from './helpers/eventually.js';
import { startServer, type TestServer } from './helpers/server.js';

const reason = async (promise: Promise<void>): Promise<string> =>
  promise.then(
    () => 'allowed',
    (error: unknown) => (error instanceof FetchError ? error.reason : String(error)),
  );

describe('assertPublicUrl', () => {
  const resolveTo =
    (...addresses: string[]) =>
    () =>
      Promise.resolve(addresses.map((address) => ({ address })));

  it('refuses what a fetch refuses and allows what it allows', async () => {
    expect(await reason(assertPublicUrl('https://127.0.0.1/a.png'))).toBe('refused');
    expect(await reason(assertPublicUrl('https://[::ffff:169.254.169.254]/a.png'))).toBe('refused');
    expect(await reason(assertPublicUrl('https://2130706433/a.png'))).toBe('refused');
    expect(await reason(assertPublicUrl('https://media.example/a.png', {}, resolveTo('10.0.0.5')))).toBe('refused');
    expect(await reason(assertPublicUrl('https://media.example/a.png', {}, resolveTo('93.184.216.34')))).toBe('allowed');
    expect(await reason(assertPublicUrl('https://media.example/a.png', { hosts: ['media.example'] }, resolveTo('10.0.0.5')))).toBe('allowed');
    expect(await reason(assertPublicUrl('https://media.example/a.png', { private: ['10.0.0.0/8'] }, resolveTo('10.0.0.5')))).toBe('allowed');
    expect(await reason(assertPublicUrl('http://8.8.8.8/a.png'))).toBe('bad_url');
    expect(await reason(assertPublicUrl('https://u:p@8.8.8.8/a.png'))).toBe('bad_url');
  });
});

describe('reference URLs through the API', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => server.close());

  async function finalTask(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const created = await fetch(`${server.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await created.text();
    expect(created.status, text).toBe(200);
    const id = String((JSON.parse(text) as Record<string, unknown>)['id']);
    let task: Record<string, unknown> = {};
    await eventually(
      async () => {
        const res = await fetch(`${server.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${server.keys[0]}` } });
        task = (await res.json()) as Record<string, unknown>;
        return task['status'] === 'failed' || task['status'] === 'completed';
      },
      { deadline: 20_000, interval: 50, what: `task ${id} to end` },
    );
    return task;
  }

  it.each([
    ['images', { images: ['https://localhost/r.png'] }],
    ['videos', { videos: ['https://169.254.169.254/latest/meta-data/v.mp4'] }],
    ['audios', { audios: ['https://[::1]/a.mp3'] }],
  ])('a task whose %s holds a non-public URL fails with input_refused, param %s', async (field, inputs) => {
    const task = await finalTask({ model: 'vendora/famw-3.0-ref2v-spicy', prompt: 'x', duration: 2, resolution: '480p', ...inputs });
    expect(task['status']).toBe('failed');
    expect(task['error']).toMatchObject({ type: 'generation_error', code: 'input_refused', param: field });
  });
});

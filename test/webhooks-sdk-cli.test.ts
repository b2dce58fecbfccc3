/**
 * The SDK's `client.webhooks` and the CLI's `webhooks add|list|remove` against the real server
 * (not the task operations stub): the shapes the server answers are the shapes the client reads, and the
 * server's signer is the Standard Webhooks scheme the SDK verifies (the reference vector too).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mediagate, NotFoundError, ValidationError } from '../src/client/index.js';
import { verifyWebhook } from '../src/client/webhook-signature.js';
import { signWebhook } from '../src/webhooks/signing.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PUBLIC = (host: string) => Promise.resolve(host === 'hooks.example.com' ? [{ address: '93.184.215.14' }] : []);

describe('the SDK and the CLI against the real server', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_WORKERS: 'false' }, { webhookResolve: PUBLIC });
  });
  afterAll(async () => server.close());

  function cli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
        cwd: ROOT,
        env: { ...process.env, MEDIAGATE_BASE_URL: server.url, MEDIAGATE_API_KEY: TEST_KEYS[1] },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  it('client.webhooks.create, list and delete', async () => {
    const client = new Mediagate({ apiKey: TEST_KEYS[0], baseURL: server.url });
    const created = await client.webhooks.create({ url: 'https://hooks.example.com/sdk', events: ['video.failed'] });
    expect(created).toMatchObject({ url: 'https://hooks.example.com/sdk', events: ['video.failed'] });
    expect(created.secret).toMatch(/^whsec_/);
    const list = await client.webhooks.list();
    expect(list.map((endpoint) => endpoint.id)).toEqual([created.id]);
    expect(list[0]?.['secret']).toBeUndefined();
    await client.webhooks.delete(created.id);
    expect(await client.webhooks.list()).toEqual([]);
    await expect(client.webhooks.delete(created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.webhooks.create({ url: 'http://hooks.example.com/plain' })).rejects.toMatchObject({ code: 'invalid_parameter', param: 'url' });
    await expect(client.webhooks.create({ url: 'https://127.0.0.1/loop' })).rejects.toBeInstanceOf(ValidationError);
  });

  it('mediagate webhooks add, list and remove', async () => {
    const add = await cli(['webhooks', 'add', 'https://hooks.example.com/cli', '--events', 'video.completed,image.failed']);
    expect(add.code, add.stderr).toBe(0);
    const secret = add.stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    const id = /Registered (wh_\S+)/.exec(add.stderr)?.[1] ?? '';
    expect(id).toMatch(/^wh_/);

    const list = await cli(['webhooks', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+https://hooks.example.com/cli\\s+video.completed,image.failed`));
    expect(list.stdout).not.toContain(secret);

    expect((await cli(['webhooks', 'remove', id])).code).toBe(0);
    expect((await cli(['webhooks', 'list'])).stdout).toContain('No webhook endpoints.');
    expect((await cli(['webhooks', 'remove', id])).code).toBe(6);
    expect((await cli(['webhooks', 'add', 'https://127.0.0.1/loop'])).code).toBe(3);
  });
});

describe('the server signer and the SDK verifier', () => {
  it('signs the Standard Webhooks reference vector as the reference libraries do', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(signWebhook(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('what the server signs, the SDK verifies', () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: 'video.completed', timestamp: new Date().toISOString(), data: { id: 'vid_x' } });
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(secret, 'msg_1', timestamp, body) };
    expect(() => verifyWebhook(body, headers, secret)).not.toThrow();
    expect(() => verifyWebhook(`${body} `, headers, secret)).toThrow();
  });
});

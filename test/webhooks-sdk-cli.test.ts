/**
 * The SDK's `client.webhooks` and the CLI's `webhooks add|list|remove|deliveries|redeliver` against the real server
 * (not the task operations stub): the shapes the server answers are the shapes the client reads, and the
 * server's signer is the Standard Webhooks scheme the SDK verifies (the reference vector too).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mediagate, NotFoundError, ValidationError } from '../src/client/index.js';
import { verifyWebhook } from '../src/client/webhook-signature.js';
import { signWebhook } from '../src/webhooks/signing.js';
import { eventually } from './helpers/eventually.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';
import { makeTestCa, startReceiver, type TestCa, type WebhookReceiver } from './helpers/webhook-receiver.js';
import { CLI } from './helpers/process.js';

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
      const child = spawn(process.execPath, [CLI, ...args], {
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

describe('mediagate webhooks deliveries and redeliver', () => {
  let ca: TestCa;
  let receiver: WebhookReceiver;
  let server: TestServer;
  beforeAll(async () => {
    ca = await makeTestCa();
    receiver = await startReceiver(ca);
    // Every attempt at /down fails until the receiver is told otherwise.
    let down = true;
    receiver.answer = (path) => (path === '/down' && down ? 'fail' : 'ok');
    Object.assign(receiver, { recover: () => (down = false) });
    server = await startServer(
      { MEDIAGATE_ENGINE: 'instant', MEDIAGATE_FETCH_ALLOW_HOSTS: '127.0.0.1', MEDIAGATE_WEBHOOK_RETRY_SCHEDULE_MS: '100' },
      { webhookTls: { ca: ca.ca }, webhookPollIntervalMs: 50 },
    );
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
    await ca.remove();
  });

  function cli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        cwd: ROOT,
        env: { ...process.env, MEDIAGATE_BASE_URL: server.url, MEDIAGATE_API_KEY: TEST_KEYS[0] },
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

  it('lists the delivery log (table and --json), redelivers a failed delivery with the same webhook-id, and refuses unknown ids', async () => {
    const client = new Mediagate({ apiKey: TEST_KEYS[0], baseURL: server.url });
    const endpoint = await client.webhooks.create({ url: `${receiver.origin}/down`, events: ['video.completed'] });
    const task = await client.videos.createAndWait({ model: 'vendora/famw-2.7-t2v', prompt: 'a delivery that fails' });
    // First attempt and its one retry (the schedule has one delay): then the delivery has failed.
    const failed = await eventually(
      async () => {
        const page = await client.webhooks.deliveries(endpoint.id);
        return page.data[0]?.status === 'failed' && page.data[0];
      },
      { deadline: 15_000, what: 'the delivery to fail' },
    );

    const listed = await cli(['webhooks', 'deliveries', endpoint.id]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^ID\s+EVENT\s+TASK\s+STATUS\s+ATTEMPTS\s+LAST\s+NEXT\s+CREATED/);
    expect(listed.stdout).toMatch(new RegExp(`${failed.id}\\s+video.completed\\s+${task.id}\\s+failed\\s+2\\s+HTTP 500\\s+-\\s+\\d{4}-`));

    const json = await cli(['webhooks', 'deliveries', endpoint.id, '--json', '--limit', '5']);
    expect(json.code, json.stderr).toBe(0);
    const deliveries = JSON.parse(json.stdout) as { id: string; attempt_log: unknown[] }[];
    expect(deliveries.map((d) => d.id)).toEqual([failed.id]);
    expect(deliveries[0]?.attempt_log).toHaveLength(2);

    (receiver as WebhookReceiver & { recover(): void }).recover();
    const before = receiver.received.filter((item) => item.path === '/down');
    const redelivered = await cli(['webhooks', 'redeliver', endpoint.id, failed.id]);
    expect(redelivered.code, redelivered.stderr).toBe(0);
    expect(redelivered.stdout).toBe(`Redelivering ${failed.id} (video.completed of ${task.id}): pending.\n`);
    const again = await eventually(() => receiver.received.filter((item) => item.path === '/down').at(before.length), {
      deadline: 10_000,
      what: 'the redelivery',
      wake: { emitter: receiver.events },
    });
    expect(again.headers['webhook-id']).toBe(before[0]?.headers['webhook-id']);
    await eventually(async () => (await client.webhooks.deliveries(endpoint.id)).data[0]?.status === 'succeeded', { what: 'the redelivery to succeed' });
    expect((await cli(['webhooks', 'deliveries', endpoint.id, '--all'])).stdout).toMatch(
      new RegExp(`${failed.id}\\s+video.completed\\s+\\S+\\s+succeeded\\s+3\\s+HTTP 204`),
    );

    expect((await cli(['webhooks', 'redeliver', endpoint.id, 'whd_unknown'])).code).toBe(6);
    expect((await cli(['webhooks', 'deliveries', 'wh_unknown'])).code).toBe(6);
    expect((await cli(['webhooks', 'deliveries', endpoint.id, '--limit', '0'])).code).toBe(2);
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

/**
 * The development setup of docs/guides/webhooks.md ("Receiving webhooks on your own machine"),
 * followed as written: its openssl commands run by bash, its receiver written to a file and run
 * by node, the service started as a process with the variables its start line sets, the receiver
 * registered with the CLI, and a task whose completion the receiver verifies and prints. The
 * guide's code is read from the guide, so the guide cannot drift from what works.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mediagate } from '../src/client/index.js';
import { eventually } from './helpers/eventually.js';
import { CLI, freePort, startProcess, type ServiceProcess } from './helpers/process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);
const KEY = 'mg_webhooks_dev_setup_key_0123456789';

interface Block {
  readonly lang: string;
  readonly code: string;
}

/** The fenced blocks of the guide's section on receiving webhooks locally, in order. */
async function guideBlocks(): Promise<Block[]> {
  const guide = await readFile(join(ROOT, 'docs/guides/webhooks.md'), 'utf8');
  const start = guide.indexOf('## Receiving webhooks on your own machine');
  expect(start, 'the section in docs/guides/webhooks.md').toBeGreaterThan(0);
  const next = guide.indexOf('\n## ', start + 1);
  const section = guide.slice(start, next === -1 ? undefined : next);
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((match) => ({ lang: match[1] ?? '', code: match[2] ?? '' }));
}

let dir: string;
let service: ServiceProcess | undefined;
let receiver: ChildProcess | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediagate-webhooks-dev-'));
});
afterAll(async () => {
  receiver?.kill('SIGKILL');
  service?.child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

describe('receiving webhooks on a development machine, as the guide says', () => {
  it('certificate, receiver, service, registration: the receiver gets the signed event', async () => {
    const [certificates, receiverCode, commands, ...rest] = await guideBlocks();
    expect([certificates?.lang, receiverCode?.lang, commands?.lang, rest.length]).toEqual(['sh', 'js', 'sh', 0]);

    // 1. The guide's openssl commands, in the directory the developer works in.
    await run('bash', ['-euo', 'pipefail', '-c', certificates?.code ?? ''], { cwd: dir });

    // 2. The receiver, beside an install of the client package (a link to this checkout's build).
    await writeFile(join(dir, 'receiver.mjs'), receiverCode?.code ?? '');
    await mkdir(join(dir, 'node_modules', '@mediagate'), { recursive: true });
    await symlink(join(ROOT, 'packages', 'client'), join(dir, 'node_modules', '@mediagate', 'client'), 'dir');

    // 3. The service with exactly the variables the guide's start line sets (paths from that directory).
    const lines = (commands?.code ?? '').split('\n');
    const startLine = lines.find((line) => /^(\w+=\S+ )+npm start$/.test(line));
    expect(startLine, 'a line `VAR=value ... npm start`').toBeDefined();
    const guideEnv = Object.fromEntries(
      // The certificate's path is relative to the directory the guide works in.
      [...(startLine ?? '').matchAll(/(\w+)=(\S+) /g)].map(([, name = '', value = '']) => [name, name === 'NODE_EXTRA_CA_CERTS' ? join(dir, value) : value]),
    );
    expect(Object.keys(guideEnv).sort()).toEqual(['MEDIAGATE_FETCH_ALLOW_PRIVATE', 'NODE_EXTRA_CA_CERTS']);
    service = await startProcess(['serve'], {
      ...guideEnv,
      PORT: String(await freePort()),
      MEDIAGATE_DATA_DIR: join(dir, 'data'),
      MEDIAGATE_API_KEYS: KEY,
      MEDIAGATE_ENGINE: 'instant',
    });

    // 4. Registered with the guide's command (on a free port instead of 9443); stdout is the secret.
    const add = lines.find((line) => line.includes('mediagate webhooks add '));
    const url = /mediagate webhooks add (\S+?)\)/.exec(add ?? '')?.[1] ?? '';
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:9443\//);
    const port = await freePort();
    const registered = await run(process.execPath, [CLI, 'webhooks', 'add', url.replace(':9443', `:${port}`)], {
      cwd: ROOT,
      env: { ...process.env, MEDIAGATE_BASE_URL: service.url, MEDIAGATE_API_KEY: KEY },
    });
    const secret = registered.stdout.trim();
    expect(secret).toMatch(/^whsec_/);

    const printed = new EventEmitter();
    let output = '';
    receiver = spawn(process.execPath, ['receiver.mjs'], { cwd: dir, env: { ...process.env, WEBHOOK_SECRET: secret, RECEIVER_PORT: String(port) } });
    const collect = (chunk: Buffer): void => {
      output += chunk.toString();
      printed.emit('change');
    };
    receiver.stdout?.on('data', collect);
    receiver.stderr?.on('data', collect);
    await eventually(() => output.includes('receiver ready'), { deadline: 10_000, what: 'the receiver to listen', wake: { emitter: printed } });

    // 5. A task: its completion arrives, verified by the receiver.
    const client = new Mediagate({ baseURL: service.url, apiKey: KEY });
    const task = await client.videos.createAndWait({ model: 'vendora/famw-2.7-t2v', prompt: 'a red fox' });
    await eventually(() => output.includes(`video.completed ${task.id}`), {
      deadline: 20_000,
      what: `the receiver to print video.completed ${task.id}`,
      wake: { emitter: printed },
    });
    expect(output).not.toContain('refused');
  });
});

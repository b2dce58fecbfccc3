/**
 * The task operation client commands (`task list|cancel`, `--idempotency-key`, waits over events,
 * `webhooks add|list|remove`) and the task's own duration after a resumed wait, run as child
 * processes as built (dist/) against the task operations stub server (test/helpers/task-operations-stub.ts).
 * Each spec runs both bins, as built: `mediagate` (dist/cli/main.js) and the light package's
 * `mediagate-client` (dist/cli/client-commands/bin.js).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTaskOperationsStub, type TaskOperationsStub } from './helpers/task-operations-stub.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BINS = ['dist/cli/main.js', 'dist/cli/client-commands/bin.js'] as const;

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

let stub: TaskOperationsStub;

beforeAll(async () => {
  stub = await startTaskOperationsStub();
});

afterAll(async () => {
  await stub?.close();
});

function cli(bin: string, args: readonly string[], onStderr?: (text: string) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: ROOT,
      env: { ...process.env, MEDIAGATE_BASE_URL: stub.url, MEDIAGATE_API_KEY: stub.apiKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      onStderr?.(stderr);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.each(BINS)('%s', (bin) => {
  it('task list prints an aligned table newest first, filters, and --json / --all', async () => {
    const video = stub.seed('video', 'vendora/famw-2.7-t2v', 'completed');
    const image = stub.seed('image', 'vendora/famz-image-spicy-pro', 'queued');
    const run = await cli(bin, ['task', 'list', '--limit', '2']);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+KIND\s+MODEL\s+STATUS\s+PROGRESS\s+CREATED$/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(new RegExp(`^${image}\\s+image\\s+-\\s+queued\\s+0%\\s+\\d{4}-`));
    expect(lines[2]).toMatch(new RegExp(`^${video}\\s+video\\s+vendora/famw-2.7-t2v\\s+completed\\s+100%`));
    // Aligned: every column starts at the same offset on every line.
    const kindColumn = (line: string): number => line.search(/\b(KIND|video|image)\b/);
    expect(new Set(lines.map(kindColumn)).size).toBe(1);

    const json = await cli(bin, ['task', 'list', '--status', 'completed', '--kind', 'video', '--all', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const tasks = JSON.parse(json.stdout) as { id: string; status: string }[];
    expect(tasks.map((task) => task.id)).toContain(video);
    expect(tasks.every((task) => task.status === 'completed')).toBe(true);
    expect(stub.requests.at(-1)?.path).toMatch(/status=completed/);

    const bad = await cli(bin, ['task', 'list', '--status', 'done']);
    expect(bad.code).toBe(2);
  });

  it('task cancel cancels a queued task and exits 7 with task_not_cancellable for a completed one', async () => {
    const queued = stub.seed('image', 'vendora/famz-image-spicy-pro');
    const run = await cli(bin, ['task', 'cancel', queued, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ task_id: queued, status: 'CANCELLED' });

    const done = stub.seed('video', 'vendora/famw-2.7-t2v', 'completed');
    const refused = await cli(bin, ['task', 'cancel', done, '--json']);
    expect(refused.code).toBe(7);
    expect(JSON.parse(refused.stdout)).toMatchObject({ error: { kind: 'conflict', status: 409, code: 'task_not_cancellable', param: 'task_id' } });
    expect(refused.stderr).toContain('task_not_cancellable');
  });

  it('--idempotency-key: a repeat prints the original task and says nothing was created', async () => {
    const key = `cli-${bin.length}-${Date.now()}`;
    const args = ['video', 'create', '-m', 'vendora/famw-2.7-t2v', '-p', 'a fox', '--idempotency-key', key];
    const first = await cli(bin, args);
    expect(first.code, first.stderr).toBe(0);
    const again = await cli(bin, args);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(first.stdout);
    expect(again.stderr).toContain('nothing new was created');
    const creates = stub.requestsTo(/^\/v1\/video\/generations$/, 'POST').slice(-2);
    expect(creates.map((request) => request.headers['idempotency-key'])).toEqual([key, key]);
    const reused = await cli(bin, ['video', 'create', '-m', 'vendora/famw-2.7-t2v', '-p', 'another', '--idempotency-key', key]);
    expect(reused.code).toBe(3);
    expect(reused.stderr).toContain('idempotency_key_reused');
  });

  it('--wait follows the event stream, with no polls', async () => {
    let id = '';
    const run = await cli(bin, ['image', 'create', '-m', 'vendora/famz-image-spicy-pro', '-p', 'x', '--wait'], (text) => {
      const created = /Created image task (\S+)\./.exec(text)?.[1];
      if (created && id === '') {
        id = created;
        void stub.streamsOpen(id).then(() => stub.advance(id, { status: 'completed' }));
      }
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toMatch(/\/files\/img_\w+\.png$/);
    expect(stub.requestsTo(new RegExp(`${id}/events$`)).length).toBeGreaterThan(0);
    expect(stub.requestsTo(new RegExp(`${id}$`), 'GET')).toHaveLength(0);
  });

  it('task wait of a task finished earlier reports its created-to-completed time, not the wait’s', async () => {
    // Seeded completed tasks took 5 s (created_at + 5 = completed_at); the wait itself is instant.
    const id = stub.seed('video', 'vendora/famw-2.7-t2v', 'completed');
    const run = await cli(bin, ['task', 'wait', id, '--no-events']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`${id} completed in 0:05`);
    expect(stub.requestsTo(new RegExp(`${id}/events$`))).toHaveLength(0);
  });

  it('webhooks add prints the secret once; list shows the endpoint without it; remove deletes it', async () => {
    const add = await cli(bin, ['webhooks', 'add', 'https://hooks.example.com/in', '--events', 'video.completed,image.failed']);
    expect(add.code, add.stderr).toBe(0);
    const secret = add.stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    const endpoint = [...stub.webhooks.values()].find((item) => item.secret === secret);
    expect(endpoint?.events).toEqual(['video.completed', 'image.failed']);
    expect(add.stderr).toContain(endpoint?.id ?? '?');

    const list = await cli(bin, ['webhooks', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`${endpoint?.id}\\s+https://hooks.example.com/in\\s+video.completed,image.failed`));
    expect(list.stdout).not.toContain(secret);

    const remove = await cli(bin, ['webhooks', 'remove', endpoint?.id ?? '']);
    expect(remove.code, remove.stderr).toBe(0);
    expect(stub.webhooks.has(endpoint?.id ?? '')).toBe(false);
    expect((await cli(bin, ['webhooks', 'remove', endpoint?.id ?? ''])).code).toBe(6);
    expect((await cli(bin, ['webhooks', 'add', 'https://x.example.com', '--events', 'video.started'])).code).toBe(2);
  });
});

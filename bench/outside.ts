/**
 * The server measured from outside, as an operator runs it: `npx tsx bench/outside.ts`.
 * `node dist/cli/main.js serve --no-workers` (the README's `npm start`, API only, so nothing
 * renders and every task stays queued) with its own defaults (the sandbox engine, `info` logs,
 * the default in-flight limit; only the per-minute rate limit off, or one key's load would be
 * 429s), against a bare node:http server, the two in turn in every round. Nothing of the
 * server's code is imported: the figures are what a client and `/proc` see. Per round: creates
 * of both families, then polls of 200 tasks created just before and still queued. Each row is
 * the server's CPU per request (all its threads) and its ratio to the ceiling's in the same
 * round. `--rounds=N` (default 3), `--seconds=N` per phase (default 3, after 1 s of warm-up),
 * `--in-flight=N` sets MEDIAGATE_MAX_TASKS_IN_FLIGHT (default: the server's own, 5000, which
 * a create phase passes: the rounds' creates are counted, and the limit is raised above them).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Request } from 'autocannon';
import { load } from './lib/load.js';
import { cpuMicros, serve, type Served } from './lib/proc.js';

const option = (name: string, fallback: number): number => {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  return given === undefined ? fallback : Number(given.slice(name.length + 3));
};
const ROUNDS = option('rounds', 3);
const SECONDS = option('seconds', 3);
const CONNECTIONS = 50;
const KEY = 'mg_outside_key_0123456789abcdef';
const AUTH = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
// Enough for every create of every round (a create phase here makes ~20k-60k tasks).
const IN_FLIGHT = option('in-flight', 10_000_000);

const post = (body: object): Request => ({ method: 'POST', headers: AUTH, body: JSON.stringify(body) });
const VIDEO = [
  post({ model: 'vendora/famw-2.7-t2v', prompt: 'a red fox in snow', duration: 8, aspect_ratio: '16:9' }),
  post({ model: 'vendora/famw-2.7-i2v', prompt: 'the fox runs', image: 'https://example.com/fox.png', resolution: '1080p' }),
];
const IMAGE = [post({ model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', size: '1024x1024' })];

interface Row {
  readonly round: number;
  readonly phase: string;
  readonly rps: number;
  readonly cpuUs: number;
  readonly non2xx: number;
}

async function phase(server: Served, path: string, requests?: Request[]): Promise<Omit<Row, 'round' | 'phase'>> {
  const url = `${server.url}${path}`;
  const headers = requests ? {} : AUTH;
  await load({ url, connections: CONNECTIONS, durationS: 1, headers, ...(requests ? { requests } : {}) });
  const before = await cpuMicros(server.child.pid);
  const result = await load({ url, connections: CONNECTIONS, durationS: SECONDS, headers, ...(requests ? { requests } : {}) });
  const used = (await cpuMicros(server.child.pid)) - before;
  return { rps: result.rps, cpuUs: result.requests === 0 ? 0 : used / result.requests, non2xx: result.non2xx };
}

/** 200 tasks of one family, created one by one, their ids in order. */
async function createTasks(server: Served, path: string, body: object): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 200; i += 1) {
    const answer = await fetch(`${server.url}${path}`, { method: 'POST', headers: AUTH, body: JSON.stringify({ ...body, prompt: `outside ${i}` }) });
    // The video family answers the task, the image family `{ data: { task_id } }`.
    const task = (await answer.json()) as { id?: string; data?: { task_id?: string } };
    const id = task.id ?? task.data?.task_id;
    if (answer.status !== 200 || typeof id !== 'string') throw new Error(`create answered ${answer.status}`);
    ids.push(id);
  }
  return ids;
}

const polls = (base: string, ids: readonly string[]): Request[] => ids.map((id) => ({ method: 'GET', path: `${base}/${id}`, headers: AUTH }));

const dir = await mkdtemp(join(tmpdir(), 'mediagate-outside-'));
const rows: Row[] = [];
try {
  const ceiling = await serve(process.execPath, ['--import', 'tsx', 'bench/ceiling-server.ts'], {}, '/');
  const server = await serve(
    process.execPath,
    ['dist/cli/main.js', 'serve', '--no-workers'],
    { MEDIAGATE_DATA_DIR: dir, MEDIAGATE_API_KEYS: KEY, MEDIAGATE_RATE_LIMIT_PER_MIN: '0', MEDIAGATE_MAX_TASKS_IN_FLIGHT: String(IN_FLIGHT) },
    '/healthz',
  );
  try {
    for (let round = 1; round <= ROUNDS; round += 1) {
      const add = (name: string, measured: Omit<Row, 'round' | 'phase'>): void => {
        rows.push({ round, phase: name, ...measured });
        process.stderr.write(`  round ${round}, ${name}: ${measured.rps} req/s, ${measured.cpuUs.toFixed(1)} µs/req, non-2xx ${measured.non2xx}\n`);
      };
      add('ceiling: bare node:http', await phase(ceiling, '/'));
      add('create video', await phase(server, '/v1/video/generations', VIDEO));
      add('create image', await phase(server, '/v1/images/generations/async', IMAGE));
      const videos = await createTasks(server, '/v1/video/generations', { model: 'vendora/famw-2.7-t2v', duration: 4 });
      const images = await createTasks(server, '/v1/images/generations/async', { model: 'vendora/famz-image-spicy' });
      add('poll video, 200 queued', await phase(server, '/', polls('/v1/video/generations', videos)));
      add('poll image, 200 queued', await phase(server, '/', polls('/v1/images/generations/async', images)));
    }
  } finally {
    await server.stop();
    await ceiling.stop();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

const phases = [...new Set(rows.map((row) => row.phase))];
const lines = ['| phase | ' + Array.from({ length: ROUNDS }, (_, i) => `round ${i + 1}: µs (vs ceiling)`).join(' | ') + ' |'];
lines.push('|---|' + '---:|'.repeat(ROUNDS));
for (const name of phases) {
  const cells = Array.from({ length: ROUNDS }, (_, i) => {
    const row = rows.find((r) => r.round === i + 1 && r.phase === name);
    const ceilingUs = rows.find((r) => r.round === i + 1 && r.phase.startsWith('ceiling'))?.cpuUs ?? 0;
    if (!row) return '';
    const flag = row.non2xx > 0 ? ` [${row.non2xx} non-2xx]` : '';
    return `${row.cpuUs.toFixed(1)} (${Math.round((ceilingUs / row.cpuUs) * 100)}%)${flag}`;
  });
  lines.push(`| ${name} | ${cells.join(' | ')} |`);
}
process.stdout.write(`${lines.join('\n')}\n`);

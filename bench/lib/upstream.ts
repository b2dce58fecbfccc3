/**
 * The `upstream` phase: one mediagate process follows N upstream tasks in flight on a fake
 * DashScope (its own process) whose tasks each finish `runMs` after submission, with the
 * channel's poll_per_s = R. Measured: the server's RSS (sampled max), its CPU per poll (from
 * /proc, divided by the polls the fake counted), and the lag from the upstream finishing to our
 * task completing, beside the bound the poll rate allows (N/R) and beside a relay-like baseline
 * measured in the same run against the same fake and the same tasks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { cpuMicros, rssMiB, stopChild, type Served } from './proc.js';

export interface UpstreamSettings {
  readonly tasks: number;
  readonly runMs: number;
  readonly pollPerS: number;
  readonly submitPerS: number;
}

export interface UpstreamFigure extends UpstreamSettings {
  readonly seconds: number;
  readonly failed: number;
  readonly rssMaxMiB: number;
  readonly polls: number;
  /** Polls per second of the server while every task was in flight (0: no such window of 5 s). */
  readonly pollRate: number;
  /** Server CPU per poll (µs) while every task was in flight and none had finished: polls only (0: no such window). */
  readonly cpuUsPerPollSteady: number;
  /** Server CPU per poll from the last submission to the end (polls, output copies, completions). */
  readonly cpuUsPerPollAfterSubmissions: number;
  /** When the fake had accepted every task, from the first create. */
  readonly submittedAfterS: number;
  /** Server CPU over the whole phase (creates, submissions, polls, copies, completions) per poll. */
  readonly cpuUsPerPollOverall: number;
  readonly lagP50S: number;
  readonly lagP99S: number;
  readonly lagMaxS: number;
  /** N/R: the interval at which each task is polled when the rate is shared round robin. */
  readonly boundS: number;
  readonly baseline: BaselineFigure;
}

export interface BaselineFigure {
  /** Polls the loop really made during the phase, and its measured cycle (poll + 1 s pause). */
  readonly realPolls: number;
  readonly cycleMs: number;
  /** Lags observed by real polls; the rest follow from the loop's schedule at the measured cycle. */
  readonly observed: number;
  readonly lagP50S: number;
  readonly lagP99S: number;
}

export type StartServer = (dataDir: string, args: string[], env: Record<string, string>) => Promise<Served>;

const FAKE_KEY = 'sk-bench-upstream';
/** The model the benches route to the fake upstream. */
export const BENCH_UPSTREAM_MODEL = 'vendora/famw-2.7-t2v';
const MODEL = BENCH_UPSTREAM_MODEL;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface FakeStatsBody {
  readonly polls: number;
  readonly submits: number;
  readonly files: number;
  readonly tasks: readonly (readonly [string, string, number])[];
}

async function startFake(runMs: number): Promise<{ child: ChildProcess; origin: string; stats: () => Promise<FakeStatsBody> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/upstream-fake.ts'], {
    env: { ...process.env, UPSTREAM_FAKE_RUN_MS: String(runMs), UPSTREAM_FAKE_KEY: FAKE_KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const deadline = Date.now() + 30_000;
  let match: RegExpExecArray | null;
  while (!(match = /upstream fake (\S+) (\S+)/.exec(output))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the upstream fake did not start: ${output}`);
    await sleep(100);
  }
  const [, origin = '', control = ''] = match;
  return { child, origin, stats: async () => (await (await fetch(`${control}/stats`)).json()) as FakeStatsBody };
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

const seconds = (ms: number): number => Math.round(ms / 100) / 10;

/**
 * What common relays do: one loop over the unfinished tasks, one poll at a time, 1 s pause after
 * each. It runs for real during the phase, over the same tasks as the server (their upstream ids
 * read from the fake as they are created); when the phase ends, the rest of its schedule is
 * continued at the cycle it measured (a full round of 10,000 tasks takes ~3 hours).
 */
class RelayBaseline {
  private readonly finishAt = new Map<string, number>();
  private list: string[] = [];
  private position = 0;
  private readonly lags: number[] = [];
  private polls = 0;
  private pollMsTotal = 0;
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly origin: string,
    private readonly stats: () => Promise<FakeStatsBody>,
  ) {}

  get realPolls(): number {
    return this.polls;
  }

  start(): void {
    this.loop = this.run();
  }

  private async refresh(): Promise<void> {
    const followed = new Set(this.list);
    for (const [id, , finish] of (await this.stats()).tasks) {
      if (!this.finishAt.has(id)) this.finishAt.set(id, finish);
      // New tasks join the end of the round, in submission order.
      if (!followed.has(id) && !this.done.has(id)) this.list.push(id);
    }
  }

  private readonly done = new Set<string>();

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (this.position >= this.list.length) {
        this.list = this.list.filter((id) => !this.done.has(id));
        this.position = 0;
        await this.refresh();
        if (this.list.length === 0) {
          await sleep(1000);
          continue;
        }
      }
      const id = this.list[this.position] ?? '';
      this.position += 1;
      const started = performance.now();
      const answer = await fetch(`${this.origin}/api/v1/tasks/${id}`, { headers: { authorization: `Bearer ${FAKE_KEY}` } });
      const body = (await answer.json()) as { output?: { task_status?: string } };
      this.pollMsTotal += performance.now() - started;
      this.polls += 1;
      if (body.output?.task_status === 'SUCCEEDED') {
        this.done.add(id);
        this.lags.push(Date.now() - (this.finishAt.get(id) ?? Date.now()));
      }
      await sleep(1000);
    }
  }

  /** Stops the real loop, then follows the same schedule on paper at the measured cycle. */
  async finish(): Promise<BaselineFigure> {
    this.stopped = true;
    await this.loop;
    const observed = this.lags.length;
    const cycleMs = 1000 + (this.polls === 0 ? 0 : this.pollMsTotal / this.polls);
    await this.refresh();
    // Visit k starts at `at`, its answer is read pollMs later, then the loop pauses 1 s.
    const pollMs = cycleMs - 1000;
    let at = Date.now();
    let order = [...this.list.slice(this.position), ...this.list.slice(0, this.position)].filter((id) => !this.done.has(id));
    while (order.length > 0) {
      const unfinished: string[] = [];
      for (const id of order) {
        const seen = at + pollMs;
        const finish = this.finishAt.get(id) ?? 0;
        if (finish <= seen) this.lags.push(seen - finish);
        else unfinished.push(id);
        at += cycleMs;
      }
      order = unfinished;
    }
    const sorted = [...this.lags].sort((a, b) => a - b);
    return {
      realPolls: this.polls,
      cycleMs: Math.round(cycleMs * 10) / 10,
      observed,
      lagP50S: seconds(percentile(sorted, 50)),
      lagP99S: seconds(percentile(sorted, 99)),
    };
  }
}

/**
 * The benches' channels file: MODEL to a DashScope channel `bench` at the fake's origin (its key
 * in BENCH_UPSTREAM_KEY), every other model to the sandbox. Returns the file's path.
 */
export async function writeBenchChannels(
  dataDir: string,
  origin: string,
  limits: { maxInFlight: number; submitPerS: number; pollPerS: number; timeoutS: number },
): Promise<string> {
  const channelsFile = join(dataDir, 'channels.json');
  const bench = {
    protocol: 'dashscope',
    base_url: origin,
    api_key_env: 'BENCH_UPSTREAM_KEY',
    max_in_flight: limits.maxInFlight,
    submit_per_s: limits.submitPerS,
    poll_per_s: limits.pollPerS,
    timeout_s: limits.timeoutS,
  };
  const routes = [
    { model: MODEL, to: [{ channel: 'bench', upstream_model: 'wan2.7-t2v' }] },
    { model: '*', to: [{ channel: 'sandbox' }] },
  ];
  await writeFile(channelsFile, JSON.stringify({ channels: { bench }, routes }));
  return channelsFile;
}

export async function phaseUpstream(start: StartServer, apiKey: string, settings: UpstreamSettings, log: (line: string) => void): Promise<UpstreamFigure> {
  const { tasks, runMs, pollPerS, submitPerS } = settings;
  const fake = await startFake(runMs);
  const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-bench-upstream-'));
  let server: Served | undefined;
  let sampler: NodeJS.Timeout | undefined;
  try {
    const channelsFile = await writeBenchChannels(dataDir, fake.origin, { maxInFlight: tasks, submitPerS, pollPerS, timeoutS: 3600 });
    server = await start(dataDir, ['serve'], { MEDIAGATE_CHANNELS_FILE: channelsFile, BENCH_UPSTREAM_KEY: FAKE_KEY });
    const pid = server.child.pid;
    let rssMax = await rssMiB(pid);
    sampler = setInterval(() => void rssMiB(pid).then((rss) => (rssMax = Math.max(rssMax, rss))), 500);
    const cpuStart = await cpuMicros(pid);
    const started = Date.now();
    const baseline = new RelayBaseline(fake.origin, fake.stats);
    baseline.start();

    // Create the tasks through the API, 32 at a time.
    const url = server.url;
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let i = next++; i < tasks; i = next++) {
          const res = await fetch(`${url}/v1/video/generations`, {
            method: 'POST',
            headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: MODEL, prompt: `upstream bench ${i}` }),
          });
          if (res.status !== 200) throw new Error(`create answered ${res.status}: ${await res.text()}`);
          await res.arrayBuffer();
        }
      }),
    );
    log(`  created ${tasks} tasks in ${seconds(Date.now() - started)} s`);

    // Steady window: every task submitted upstream, none finished yet: the server only polls.
    // (Absent when the submissions outlast the first task: then only the whole-phase figure.)
    const submitted = async (): Promise<FakeStatsBody | undefined> => {
      const stats = await fake.stats();
      return stats.submits >= tasks ? stats : undefined;
    };
    let stats = await submitted();
    while (!stats) {
      await sleep(200);
      stats = await submitted();
    }
    const firstFinish = Math.min(...stats.tasks.map(([, , finish]) => finish));
    const steadyFrom = { at: Date.now(), cpu: await cpuMicros(pid), polls: stats.polls - baseline.realPolls };
    log(
      `  all ${tasks} submitted after ${seconds(steadyFrom.at - started)} s; steady polling for ${seconds(Math.max(0, firstFinish - steadyFrom.at - 1000))} s`,
    );
    await sleep(Math.max(0, firstFinish - Date.now() - 1000));
    const steadyTo = { at: Date.now(), cpu: await cpuMicros(pid), polls: (await fake.stats()).polls - baseline.realPolls };

    // Until every task of ours is final.
    const db = new BetterSqlite3(join(dataDir, 'mediagate.db'), { readonly: true });
    const active = db.prepare("SELECT count(*) AS n FROM tasks WHERE status IN ('queued', 'processing')");
    const deadline = Date.now() + runMs + ((tasks / pollPerS) * 1000 + 60_000) * 4;
    for (;;) {
      const n = (active.get() as { n: number }).n;
      if (n === 0) break;
      if (Date.now() > deadline) throw new Error(`${n} upstream tasks still in flight at the deadline`);
      await sleep(500);
    }
    const elapsed = Date.now() - started;
    const cpuEnd = await cpuMicros(pid);
    const afterSubmissions = { ms: Date.now() - steadyFrom.at, cpu: cpuEnd - steadyFrom.cpu };
    clearInterval(sampler);
    sampler = undefined;
    const baselineFigure = await baseline.finish();
    stats = await fake.stats();
    const serverPolls = stats.polls - baselineFigure.realPolls;
    const finishByPrompt = new Map(stats.tasks.map(([, prompt, finish]) => [prompt, finish]));
    const rows = db.prepare('SELECT status, completed_at, params FROM tasks').all() as { status: string; completed_at: number; params: string }[];
    db.close();
    const lags: number[] = [];
    let failed = 0;
    for (const row of rows) {
      if (row.status !== 'completed') {
        failed += 1;
        continue;
      }
      const prompt = (JSON.parse(row.params) as { prompt?: string }).prompt ?? '';
      const finish = finishByPrompt.get(prompt);
      if (finish !== undefined) lags.push(row.completed_at - finish);
    }
    lags.sort((a, b) => a - b);
    // Less than 5 s of polling alone is too short to read.
    const steadyPolls = steadyTo.at - steadyFrom.at >= 5000 ? steadyTo.polls - steadyFrom.polls : 0;
    return {
      ...settings,
      seconds: seconds(elapsed),
      failed,
      rssMaxMiB: rssMax,
      polls: serverPolls,
      pollRate: Math.round((steadyPolls / Math.max(1, steadyTo.at - steadyFrom.at)) * 1000),
      cpuUsPerPollSteady: steadyPolls === 0 ? 0 : Math.round((steadyTo.cpu - steadyFrom.cpu) / steadyPolls),
      cpuUsPerPollOverall: serverPolls === 0 ? 0 : Math.round((cpuEnd - cpuStart) / serverPolls),
      cpuUsPerPollAfterSubmissions: serverPolls - steadyFrom.polls <= 0 ? 0 : Math.round(afterSubmissions.cpu / (serverPolls - steadyFrom.polls)),
      submittedAfterS: seconds(steadyFrom.at - started),
      lagP50S: seconds(percentile(lags, 50)),
      lagP99S: seconds(percentile(lags, 99)),
      lagMaxS: seconds(lags.at(-1) ?? 0),
      boundS: Math.round((tasks / pollPerS) * 10) / 10,
      baseline: baselineFigure,
    };
  } finally {
    if (sampler) clearInterval(sampler);
    await server?.stop();
    await stopChild(fake.child);
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * The Grafana dashboard (deploy/grafana/mediagate-dashboard.json) against a real Prometheus:
 * Debian's `prometheus` scrapes a running mediagate every second while it does work (tasks on
 * the sandbox and through a fake provider's channel that answers a 429 and a 500, a create
 * refused by a budget), then every panel's expression is evaluated through Prometheus' HTTP API
 * and must return data. Also: the scrape example (deploy/prometheus/prometheus.yml) passes
 * `promtool check config`. Skipped, saying why, where `prometheus` is not installed.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseChannelsConfig } from '../src/channels/config.js';
import { Mediagate, MediagateAdmin, APIError } from '../src/client/index.js';
import { createInstantEngine } from '../src/engines/instant.js';
import { startDashscopeFake, type DashscopeFake } from './fakes/dashscope.js';
import { eventually } from './helpers/eventually.js';
import { envKeyId } from './helpers/ledger.js';
import { freePort } from './helpers/process.js';
import { startServer, type TestServer } from './helpers/server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DASHBOARD = join(ROOT, 'deploy/grafana/mediagate-dashboard.json');
const SCRAPE_EXAMPLE = join(ROOT, 'deploy/prometheus/prometheus.yml');
const ADMIN = 'mg_test_admin_key_0123456789';
const T2V = 'vendora/famw-2.7-t2v';
const IMAGE = 'vendora/famz-image-spicy';
const UPSTREAM_KEY = 'sk-dashscope-test';

const installed = (command: string): boolean => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
const HAS_PROMETHEUS = installed('prometheus');
const split = process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'split';
const why = !HAS_PROMETHEUS ? ' (skipped: Debian’s prometheus is not installed: apt-get install prometheus)' : split ? ' (skipped in the split topology)' : '';

interface Target {
  expr: string;
}
interface Panel {
  type: string;
  title: string;
  description?: string;
  datasource?: { uid: string };
  targets?: Target[];
}

/** Grafana's interval variables as Prometheus sees them, wide enough to cover the whole run. */
const evaluable = (expr: string): string => expr.replace(/\$__rate_interval|\$__range|\$__interval/g, '5m');

async function dashboardPanels(): Promise<Panel[]> {
  const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { panels: Panel[] };
  return dashboard.panels.filter((panel) => panel.type !== 'row');
}

describe('the dashboard file', () => {
  it('has a described panel with a query, on the datasource variable, for every question it answers', async () => {
    const panels = await dashboardPanels();
    expect(panels.length).toBeGreaterThanOrEqual(15);
    for (const panel of panels) {
      expect(panel.description, panel.title).toBeTruthy();
      expect(panel.datasource?.uid, panel.title).toBe('${datasource}');
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
    }
    const exprs = panels.flatMap((panel) => panel.targets ?? []).map((target) => target.expr);
    for (const series of [
      'mediagate_tasks',
      'mediagate_tasks_settled_total',
      'mediagate_task_queue_wait_seconds_bucket',
      'mediagate_task_render_seconds_bucket',
      'mediagate_channel_upstream_seconds_bucket',
      'mediagate_channel_throttled_total',
      'mediagate_budget_refusals_total',
      'mediagate_task_cost_micro_total',
      'mediagate_http_requests_total',
      'mediagate_http_request_duration_seconds_bucket',
      'mediagate_nodejs_eventloop_lag_p99_seconds',
    ]) {
      expect(
        exprs.some((expr) => new RegExp(`\\b${series}\\b`).test(expr)),
        series,
      ).toBe(true);
    }
  });

  it.skipIf(!installed('promtool'))('ships a scrape example promtool accepts', async () => {
    const { stdout } = await promisify(execFile)('promtool', ['check', 'config', SCRAPE_EXAMPLE]);
    expect(stdout).toContain('SUCCESS');
  });
});

describe.skipIf(!HAS_PROMETHEUS || split)(`every panel on a real Prometheus${why}`, () => {
  let fake: DashscopeFake;
  let server: TestServer;
  let prometheus: ChildProcess | undefined;
  let prometheusUrl = '';
  let dir = '';
  let prometheusLog = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mediagate-prometheus-'));
    await writeFile(
      join(dir, 'pricing.json'),
      JSON.stringify({ currency: 'USD', models: { [T2V]: { per_task: 0.1, per_second: 0.05 }, '*': { per_image: 0.02, per_second: 0.01 } } }),
    );
    fake = await startDashscopeFake({ apiKey: UPSTREAM_KEY, queuedMs: 100, runMs: 600 });
    const channels = parseChannelsConfig(
      JSON.stringify({
        channels: { wan: { protocol: 'dashscope', base_url: fake.origin, api_key_env: 'T_KEY' } },
        routes: [
          { model: T2V, to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
          { model: '*', to: [{ channel: 'sandbox' }] },
        ],
      }),
      { T_KEY: UPSTREAM_KEY },
    );
    server = await startServer(
      { MEDIAGATE_PRICING_FILE: join(dir, 'pricing.json'), MEDIAGATE_RATE_LIMIT_PER_MIN: '0', MEDIAGATE_ADMIN_KEYS: ADMIN },
      { channels, engine: createInstantEngine(), upstreamTimings: { pollStartMs: 100, pollMaxMs: 300, idleMs: 100 } },
    );

    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    const target = new URL(server.url).host;
    await writeFile(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'scrape_configs:',
        '  - job_name: mediagate-api',
        '    metrics_path: /metrics',
        '    static_configs:',
        `      - targets: ['${target}']`,
        '',
      ].join('\n'),
    );
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    prometheus.stderr?.on('data', (chunk: Buffer) => (prometheusLog = (prometheusLog + chunk.toString()).slice(-4000)));
    await eventually(async () => (await fetch(`${prometheusUrl}/-/ready`).catch(() => undefined))?.ok === true, {
      deadline: 30_000,
      what: 'prometheus to be ready',
    });

    // Work: a channel task whose polls meet a 429 and a 500, a sandbox image, a budget refusal.
    const fast = { pollInterval: 50, maxPollInterval: 200 };
    const client = new Mediagate({ baseURL: server.url, apiKey: server.keys[0] });
    fake.http.inject({ on: 'poll', kind: '429' });
    fake.http.inject({ on: 'poll', kind: '500' });
    await client.videos.createAndWait({ model: T2V, prompt: 'dashboard', duration: 2 }, fast);
    await client.videos.createAndWait({ model: T2V, prompt: 'dashboard again', duration: 3 }, fast);
    await client.images.createAndWait({ model: IMAGE, prompt: 'dashboard' }, fast);
    await new MediagateAdmin({ baseURL: server.url, apiKey: ADMIN }).keys.update(envKeyId(server.keys[1]), { budget: 0.01, budget_period: 'month' });
    const refused = await new Mediagate({ baseURL: server.url, apiKey: server.keys[1], maxRetries: 0 }).videos
      .create({ model: T2V, prompt: 'over budget', duration: 2 })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused instanceof APIError ? refused.status : refused).toBe(402);
    expect(fake.http.stats.throttled).toBeGreaterThanOrEqual(1);
  }, 120_000);

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus?.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await server?.close();
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const query = async (expr: string): Promise<unknown[]> => {
    const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await response.json()) as { status: string; error?: string; data?: { result: unknown[] } };
    if (body.status !== 'success') throw new Error(`${expr}: ${body.error ?? response.status}`);
    return body.data?.result ?? [];
  };

  it('returns data for every query of every panel', async () => {
    const panels = await dashboardPanels();
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        const expr = evaluable(target.expr);
        const result = await eventually(
          async () => {
            const found = await query(expr);
            return found.length > 0 ? found : undefined;
          },
          {
            deadline: 30_000,
            interval: 500,
            what: `data for "${panel.title}": ${expr} (prometheus: ${prometheusLog.slice(-500)})`,
          },
        );
        expect(result.length, `${panel.title}: ${expr}`).toBeGreaterThan(0);
      }
    }
  }, 300_000);

  it('sees the 429, the budget refusal and the spend of the work', async () => {
    const value = async (expr: string): Promise<number> => {
      const [first] = (await query(expr)) as { value: [number, string] }[];
      return Number(first?.value[1] ?? NaN);
    };
    expect(await value('sum(mediagate_channel_throttled_total)')).toBeGreaterThanOrEqual(1);
    expect(await value('sum(mediagate_budget_refusals_total)')).toBe(1);
    // The spend the dashboard shows is the usage report's.
    const report = await new MediagateAdmin({ baseURL: server.url, apiKey: ADMIN }).usage.retrieve({ groupBy: 'key' });
    expect(report.totals.cost).toBeGreaterThan(0);
    expect(await value('sum(mediagate_task_cost_micro_total)')).toBe(Math.round(report.totals.cost * 1_000_000));
  });
});

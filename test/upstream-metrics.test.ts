// The per-channel series (channels/metrics.ts, docs/channels.md "Metrics") as the scheduler
// records them: a task run through a fake upstream shows up at GET /metrics of the serving process
// with the channel's label: its submission, its polls by outcome, a 429 the fake answered, the
// upstream latency, the bytes of the output copied, and the in-flight gauge while it runs.
// (Worker processes serve the same series on MEDIAGATE_METRICS_PORT: test/upstream-limits.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseChannelsConfig } from '../src/channels/config.js';
import { startDashscopeFake, type DashscopeFake } from './fakes/dashscope.js';
import { TINY_MP4 } from './fakes/upstream-kit.js';
import { eventually } from './helpers/eventually.js';
import { sample } from './helpers/prom.js';
import { startServer, type TestServer } from './helpers/server.js';

const split = process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'split';
const KEY = 'sk-dashscope-test';
let fake: DashscopeFake;
let server: TestServer;

beforeAll(async () => {
  if (split) return;
  fake = await startDashscopeFake({ apiKey: KEY, queuedMs: 200, runMs: 2_500 });
  const channels = parseChannelsConfig(
    JSON.stringify({
      channels: { wan: { protocol: 'dashscope', base_url: fake.origin, api_key_env: 'T_KEY' } },
      routes: [
        { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
        { model: '*', to: [{ channel: 'sandbox' }] },
      ],
    }),
    { T_KEY: KEY },
  );
  server = await startServer({ MEDIAGATE_ENGINE: 'instant' }, { channels, upstreamTimings: { pollStartMs: 100, pollMaxMs: 300, idleMs: 100 } });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await fake?.close();
});

describe.skipIf(split)('channel metrics of the serving process', () => {
  it('count the submission, polls by outcome, a 429, latency, copied bytes and the in-flight gauge under the channel label', async () => {
    const scrape = async (): Promise<string> => (await fetch(`${server.url}/metrics`)).text();
    expect(sample(await scrape(), 'mediagate_channel_submissions_total', { channel: 'wan', outcome: 'accepted' })).toBe(0);
    // The first poll is answered 429 by the fake.
    fake.http.inject({ on: 'poll', kind: '429' });
    const res = await fetch(`${server.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'metrics' }),
    });
    const { id } = (await res.json()) as { id: string };
    let inFlightSeen = 0;
    await eventually(
      async () => {
        inFlightSeen = Math.max(inFlightSeen, sample(await scrape(), 'mediagate_channel_in_flight', { channel: 'wan' }));
        const task = (await (await fetch(`${server.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${server.keys[0]}` } })).json()) as {
          status: string;
        };
        return task.status === 'completed';
      },
      { deadline: 20_000, interval: 100, what: 'the task to complete' },
    );
    expect(fake.http.stats.throttled).toBe(1);
    const text = await scrape();
    expect(inFlightSeen).toBe(1);
    expect(sample(text, 'mediagate_channel_submissions_total', { channel: 'wan', outcome: 'accepted' })).toBe(1);
    expect(sample(text, 'mediagate_channel_throttled_total', { channel: 'wan', operation: 'poll' })).toBe(1);
    expect(sample(text, 'mediagate_channel_polls_total', { channel: 'wan', outcome: 'throttled' })).toBe(1);
    expect(sample(text, 'mediagate_channel_polls_total', { channel: 'wan', outcome: 'succeeded' })).toBe(1);
    expect(sample(text, 'mediagate_channel_polls_total', { channel: 'wan', outcome: 'running' })).toBeGreaterThan(0);
    expect(sample(text, 'mediagate_channel_copy_bytes_total', { channel: 'wan' })).toBe(TINY_MP4.length);
    expect(sample(text, 'mediagate_channel_upstream_seconds_count', { channel: 'wan', operation: 'submit' })).toBe(1);
    const polls = fake.http.stats.byRole.get('poll') ?? 0;
    expect(sample(text, 'mediagate_channel_upstream_seconds_count', { channel: 'wan', operation: 'poll' })).toBe(polls);
    // Settled: the gauge comes back to 0 at its next refresh.
    await eventually(async () => sample(await scrape(), 'mediagate_channel_in_flight', { channel: 'wan' }) === 0, {
      deadline: 5_000,
      what: 'the in-flight gauge to drop',
    });
  }, 40_000);
});

/**
 * A 32 MiB data-URL create against an in-process server: how long the event loop stalls
 * (perf_hooks monitorEventLoopDelay) and how slow /healthz answers while it is created,
 * claimed and rendered. Run: `npx tsx bench/big-body.ts [postgres://...]` (SQLite without an argument).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pino } from 'pino';
import sharp from 'sharp';
import { loadConfig } from '../src/config.js';
import { createMediagate } from '../src/service-factory.js';

const KEY = 'mg_bench_key_0123456789abcdef';
const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-big-'));
const databaseUrl = process.argv[2]?.startsWith('postgres') ? process.argv[2] : undefined;
const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  MEDIAGATE_DATA_DIR: dataDir,
  MEDIAGATE_API_KEYS: KEY,
  LOG_LEVEL: 'silent',
  MEDIAGATE_BODY_LIMIT_BYTES: String(40 * 1048576),
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
});
const app = await createMediagate(config, { logger: pino({ level: 'silent' }) });
const { url } = await app.start();

// Noise does not compress: a ~23.5 MB PNG, ~31.4 MiB as Base64.
const side = 2900;
const noise = Buffer.alloc(side * side * 3);
for (let i = 0; i < noise.length; i += 1) noise[i] = (i * 2654435761) >>> 24;
const png = await sharp(noise, { raw: { width: side, height: side, channels: 3 } })
  .png({ compressionLevel: 0 })
  .toBuffer();
const body = JSON.stringify({
  model: 'vendora/famw-2.7-i2v',
  prompt: 'big',
  resolution: '480p',
  duration: 2,
  image: `data:image/png;base64,${png.toString('base64')}`,
});
console.log(`body ${(body.length / 1048576).toFixed(1)} MiB`);
const bodyFile = join(dataDir, 'body.json');
await writeFile(bodyFile, body);

const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();
let polling = true;
const healthz: number[] = [];
const poll = (async () => {
  while (polling) {
    const start = performance.now();
    await fetch(`${url}/healthz`).then((r) => r.arrayBuffer());
    healthz.push(performance.now() - start);
    await new Promise((r) => setTimeout(r, 20));
  }
})();
const t0 = performance.now();
const stalls: string[] = [];
let last = performance.now();
const tick = setInterval(() => {
  const now = performance.now();
  if (now - last > 100) stalls.push(`${(last - t0).toFixed(0)}+${(now - last).toFixed(0)}`);
  last = now;
}, 10);
// The create is sent by curl, another process: an in-process client's own encoding would stall this loop.
const answer = await new Promise<string>((resolve, reject) => {
  execFile(
    'curl',
    [
      '-sS',
      '-X',
      'POST',
      `${url}/v1/video/generations`,
      '-H',
      `authorization: Bearer ${KEY}`,
      '-H',
      'content-type: application/json',
      '--data-binary',
      `@${bodyFile}`,
    ],
    { maxBuffer: 1 << 20 },
    (error, stdout) => (error ? reject(new Error('curl failed', { cause: error })) : resolve(stdout)),
  );
});
const created = JSON.parse(answer) as { id: string; status: string };
const createMs = performance.now() - t0;
console.log(`create answered in ${createMs.toFixed(0)} ms`);
console.log(JSON.stringify(created).slice(0, 300));
let status = created.status;
const deadline = Date.now() + 120_000;
while (status !== undefined && status !== 'completed' && status !== 'failed' && Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 100));
  status = ((await (await fetch(`${url}/v1/video/generations/${created.id}`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as { status: string })
    .status;
}
polling = false;
await poll;
histogram.disable();
clearInterval(tick);
console.log(`stalls over 100 ms (start+length, ms after the request began): ${stalls.join(' ')}`);
console.log(`task ${status} after ${(performance.now() - t0).toFixed(0)} ms`);
console.log(`event loop delay max ${(histogram.max / 1e6).toFixed(0)} ms, p99 ${(histogram.percentile(99) / 1e6).toFixed(0)} ms`);
console.log(`/healthz: ${healthz.length} answers, slowest ${Math.max(...healthz).toFixed(0)} ms`);
await app.close(1000);
await rm(dataDir, { recursive: true, force: true });

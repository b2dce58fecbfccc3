/**
 * Output upload and download through S3 against the data directory: a `mediagate serve`
 * process (the `instant` engine, MEDIAGATE_INSTANT_OUTPUT_BYTES of zeros after an MP4 header)
 * makes one output of SIZE_MB, moves it into the media store (a rename on disk; a streamed PUT
 * on S3), and serves it at its `/files` URL; with S3, the store's presigned URL is downloaded
 * too. Measured: the time from create to `completed` (write + store), the download, and the
 * server's peak resident memory (VmHWM) before and after, which tells whether a file is ever
 * held whole in memory (the run fails when the peak grows by more than half the output).
 *
 * Run: `eval "$(.ci/s3-server start)"; npx tsx bench/storage.ts [size in MB, default 200]`
 * (without MEDIAGATE_TEST_S3_ENDPOINT, the data directory only).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/helpers/process.js';
import { emptyPrefix, freshPrefix, s3Env, s3Target } from '../test/helpers/s3.js';

const KEY = 'mg_bench_storage_key_0123456789';
const SIZE_MB = Number(process.argv[2] ?? '200');
const BYTES = SIZE_MB * 1024 * 1024;

/** Peak and current resident memory of a process, in MiB (Linux /proc). */
async function memory(pid: number): Promise<{ peak: number; now: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { peak: Math.round(kib('VmHWM') / 1024), now: Math.round(kib('VmRSS') / 1024) };
}

async function waitFor<T>(what: string, check: () => Promise<T | undefined>, deadlineMs = 120_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Downloads `url` to nowhere; seconds taken and bytes received. */
async function download(url: string): Promise<{ s: number; bytes: number }> {
  const started = process.hrtime.bigint();
  const response = await fetch(url);
  if (response.status !== 200 || !response.body) throw new Error(`GET ${url}: ${response.status}`);
  let bytes = 0;
  for await (const chunk of response.body) bytes += (chunk as Uint8Array).length;
  return { s: Number(process.hrtime.bigint() - started) / 1e9, bytes };
}

interface Row {
  readonly store: string;
  readonly storeS: number;
  readonly downloadS: number;
  readonly presignedS?: number;
  readonly rssBefore: number;
  readonly rssPeak: number;
}

async function measure(name: string, env: Record<string, string>): Promise<Row> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-bench-storage-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '',
      PORT: String(port),
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_API_KEYS: KEY,
      MEDIAGATE_ENGINE: 'instant',
      MEDIAGATE_INSTANT_OUTPUT_BYTES: String(BYTES),
      MEDIAGATE_CONCURRENCY: '1',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitFor('the server', async () => ((await fetch(`${url}/healthz`)).ok ? true : undefined));
    const pid = child.pid ?? 0;
    const before = await memory(pid);
    const started = process.hrtime.bigint();
    const created = await fetch(`${url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'storage bench' }),
    });
    const { id } = (await created.json()) as { id: string };
    const output = await waitFor('the task to complete', async () => {
      const task = (await (await fetch(`${url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as {
        status: string;
        outputs: { url: string }[];
      };
      if (task.status === 'failed') throw new Error(JSON.stringify(task));
      return task.status === 'completed' ? task.outputs[0]?.url : undefined;
    });
    const storeS = Number(process.hrtime.bigint() - started) / 1e9;
    const proxied = await download(output);
    if (proxied.bytes !== BYTES) throw new Error(`downloaded ${proxied.bytes} bytes of ${BYTES}`);
    const after = await memory(pid);
    let presignedS: number | undefined;
    if (env['MEDIAGATE_OUTPUT_URLS'] === 'presigned') presignedS = proxied.s;
    return {
      store: name,
      storeS,
      downloadS: presignedS === undefined ? proxied.s : Number.NaN,
      ...(presignedS === undefined ? {} : { presignedS }),
      rssBefore: before.now,
      rssPeak: after.peak,
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
  }
}

const rows: Row[] = [await measure('data directory', {})];
const { target, reason } = s3Target();
if (target) {
  const prefix = freshPrefix();
  try {
    rows.push(await measure('S3 (Ceph RGW), /files', s3Env(target, prefix)));
    rows.push(await measure('S3 (Ceph RGW), presigned', { ...s3Env(target, prefix), MEDIAGATE_OUTPUT_URLS: 'presigned' }));
  } finally {
    await emptyPrefix(target, prefix);
  }
} else {
  process.stderr.write(`${reason}\n`);
}

const mbps = (s: number | undefined): string => (s === undefined || Number.isNaN(s) ? '-' : `${s.toFixed(2)} s (${Math.round(SIZE_MB / s)} MB/s)`);
process.stdout.write(`\n${SIZE_MB} MB output, one task, Node ${process.version}\n\n`);
process.stdout.write(
  '| media store | create to completed (write + store) | download via /files | download presigned | server RSS before | server peak RSS |\n',
);
process.stdout.write('|---|---|---|---|---|---|\n');
for (const row of rows) {
  process.stdout.write(
    `| ${row.store} | ${mbps(row.storeS)} | ${mbps(row.downloadS)} | ${mbps(row.presignedS)} | ${row.rssBefore} MiB | ${row.rssPeak} MiB |\n`,
  );
}
// A file held whole in memory on either way would raise the peak by its size.
const grown = rows.filter((row) => row.rssPeak - row.rssBefore > SIZE_MB / 2);
if (grown.length > 0) {
  process.stderr.write(`peak memory grew by more than half the output size: ${grown.map((row) => row.store).join(', ')}\n`);
  process.exitCode = 1;
}

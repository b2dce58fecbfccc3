/**
 * `npm run build && npx tsx bench/create-path.ts [tree]`: the CPU of a plain create outside the
 * store and node:http, per request. A built tree's server (`tree`/dist, default this one) takes
 * the bench's create bodies through its request listener (the create fast path, dispatch.ts),
 * with requests and responses that are plain objects (no socket, no HTTP parser) and a store
 * whose insert answers `inserted` at once. What is left is what a create runs on its way to the
 * insert and back: the body parse, validation, the data-URL scan, the create flow, the task
 * service, the answer, the metrics and the log line. `process.cpuUsage` over rounds of
 * ROUNDS_CREATES creates; min and median of the rounds, in µs per create.
 *
 * Two trees are compared by running it in each, in turn (docs/benchmarks.md).
 */
import { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';

type Factory = typeof import('../src/service-factory.js');
type ConfigModule = typeof import('../src/config.js');
type StoreModule = typeof import('../src/store/sqlite-store.js');

const tree = resolve(process.argv[2] ?? '.');
const ROUNDS = 9;
const ROUND_CREATES = 10_000;
const CHUNK = 1000;
const KEY = 'mg_bench_key_0123456789abcdef';

/** The bodies of bench/run.ts's create phases (no data URL: those are the router's). */
const BODIES = {
  video: [
    { model: 'vendora/famw-2.7-t2v', prompt: 'a red fox in snow', duration: 8, aspect_ratio: '16:9' },
    { model: 'vendora/famw-2.7-i2v', prompt: 'the fox runs', image: 'https://example.com/fox.png', resolution: '1080p' },
    { model: 'vendorb/famsd-2.0-mini-ref2v-spicy', prompt: 'fox', images: ['https://example.com/a.png', 'https://example.com/b.png'] },
    { model: 'vendorc-h3-enhanced-reference-to-video', prompt: 'fox', aspect_ratio: '21:9', resolution: '2k' },
  ],
  image: [
    { model: 'vendora/famz-image-spicy', prompt: 'a lighthouse', size: '1024x1024' },
    { model: 'vendora/famz-image-spicy-pro', prompt: 'a lighthouse', width: 2048, seed: 7 },
  ],
};
const PATHS = { video: '/v1/video/generations', image: '/v1/images/generations/async' };

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** One create through the listener: resolves with the status once the response ended. */
function create(listener: Listener, path: string, body: Buffer): Promise<number> {
  return new Promise((done, fail) => {
    const headers: IncomingHttpHeaders = {
      authorization: `Bearer ${KEY}`,
      'content-type': 'application/json',
      'content-length': String(body.length),
      host: '127.0.0.1',
    };
    const req = Object.assign(new EventEmitter(), { method: 'POST', url: path, headers, socket: {} });
    let status = 0;
    const res = {
      headersSent: false,
      setHeader: () => undefined,
      writeHead(code: number) {
        status = code;
        this.headersSent = true;
        return this;
      },
      end: () => done(status),
    };
    listener(req as unknown as IncomingMessage, res as unknown as ServerResponse);
    if (req.listenerCount('end') === 0) fail(new Error(`${path}: the fast path did not take the create (the router would have)`));
    req.emit('data', body);
    req.emit('end');
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function main(): Promise<void> {
  const { createMediagate } = (await import(join(tree, 'dist/service-factory.js'))) as Factory;
  const { loadConfig } = (await import(join(tree, 'dist/config.js'))) as ConfigModule;
  const { SqliteStore } = (await import(join(tree, 'dist/store/sqlite-store.js'))) as StoreModule;
  // The insert is not what is measured here (bench/run.ts's insert figures are).
  SqliteStore.prototype.insertTask = () => Promise.resolve('inserted');
  const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-create-path-'));
  const config = loadConfig({
    MEDIAGATE_DATA_DIR: dataDir,
    MEDIAGATE_API_KEYS: KEY,
    MEDIAGATE_ENGINE: 'instant',
    MEDIAGATE_WORKERS: 'false',
    LOG_LEVEL: 'warn',
    MEDIAGATE_RATE_LIMIT_PER_MIN: '0',
    MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
    PORT: '0',
    HOST: '127.0.0.1',
  });
  const app = await createMediagate(config, { logger: pino({ level: config.logLevel }) });
  try {
    await app.http.ready();
    const [listener] = app.http.server.listeners('request') as Listener[];
    if (listener === undefined) throw new Error('no request listener');
    // A first create through the router looks the key up (and shows the server answers).
    const answer = await app.http.inject({
      method: 'POST',
      url: PATHS.image,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      payload: BODIES.image[0],
    });
    if (answer.statusCode !== 200) throw new Error(`create through the router: ${answer.statusCode} ${answer.body}`);
    // The key's cached lookup lasts 5 s from the lookup, however often it is used: looked up
    // again between chunks, outside the measure.
    const refreshKey = async (): Promise<void> => {
      await app.keys.resolveFresh(KEY);
    };
    for (const kind of ['video', 'image'] as const) {
      const bodies = BODIES[kind].map((body) => Buffer.from(JSON.stringify(body)));
      const perCreate: number[] = [];
      for (let round = -1; round < ROUNDS; round += 1) {
        let used = 0;
        for (let i = 0; i < ROUND_CREATES;) {
          await refreshKey();
          const before = process.cpuUsage();
          for (const end = i + CHUNK; i < end; i += 1) {
            const status = await create(listener, PATHS[kind], bodies[i % bodies.length] ?? Buffer.alloc(0));
            if (status !== 200) throw new Error(`create ${kind}: ${status}`);
          }
          const spent = process.cpuUsage(before);
          used += spent.user + spent.system;
        }
        // Round -1 warms the JIT up.
        if (round >= 0) perCreate.push(used / ROUND_CREATES);
      }
      const min = Math.min(...perCreate);
      process.stdout.write(
        `create ${kind}: min ${min.toFixed(2)} µs, median ${median(perCreate).toFixed(2)} µs per create (${ROUNDS} rounds of ${ROUND_CREATES}; ${tree})\n`,
      );
    }
  } finally {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();

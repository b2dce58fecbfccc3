/**
 * A create's insert alone: `npx tsx bench/insert.ts`. The SQLite store's `insertTask` as the
 * server calls it for a plain create (guarded: `inFlightLimit` 0, a key with neither budget nor
 * limit), in group commits of BATCH tasks (the mean batch of the bench's create phases at 50
 * connections: 25,743 tasks in 1,449 commits in one counted run), ROUNDS rounds of PER inserts.
 * CPU time from `process.cpuUsage` (all threads), not wall time, so other work on a shared
 * machine moves the figure less; the minimum and the median of the rounds per insert.
 * `--batch=N`, `--rounds=N`, `--per=N` change the shape.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../src/store/sqlite.js';

const option = (name: string, fallback: number): number => {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  return given === undefined ? fallback : Number(given.slice(name.length + 3));
};
const BATCH = option('batch', 18);
const ROUNDS = option('rounds', 5);
const PER = option('per', 20_000);

const dir = await mkdtemp(join(tmpdir(), 'mediagate-insert-bench-'));
try {
  const store = openSqliteStore({ path: join(dir, 'mediagate.db'), synchronous: 'NORMAL' });
  await store.migrate();
  await store.insertKey({ id: 'key_bench', hash: 'hash-bench', name: 'bench', createdAt: 0 });
  // A video create's resolved parameters, as the validator leaves them.
  const params = { prompt: 'a lighthouse on a cliff at dusk, waves below', duration: 4, resolution: '720p', aspect_ratio: '16:9', seed: 42 };
  let n = 0;
  const perInsert: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const before = process.cpuUsage();
    for (let done = 0; done < PER; done += BATCH) {
      const batch: Promise<unknown>[] = [];
      for (let i = 0; i < BATCH; i += 1) {
        n += 1;
        const createdAt = Date.now();
        batch.push(
          store.insertTask({
            id: `vid_bench${String(n).padStart(16, '0')}`,
            kind: 'video',
            model: 'vendora/famw-2.7-t2v',
            owner: 'key_bench',
            params,
            createdAt,
            inFlightLimit: 0,
          }),
        );
      }
      // Issued in one turn: one group commit, as a turn of the server's event loop makes them.
      await Promise.all(batch);
    }
    const used = process.cpuUsage(before);
    perInsert.push((used.user + used.system) / PER);
  }
  perInsert.sort((a, b) => a - b);
  const median = perInsert[Math.floor(perInsert.length / 2)] ?? 0;
  console.log(
    `insert, group commits of ${BATCH}, ${ROUNDS} rounds of ${PER.toLocaleString('en')}: min ${(perInsert[0] ?? 0).toFixed(1)} µs, median ${median.toFixed(1)} µs of CPU per insert (${store.driver})`,
  );
  await store.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}

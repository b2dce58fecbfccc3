import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { envKeyId, hashKey } from '../../src/auth/api-keys.js';
import { openSqlite } from '../../src/store/sqlite-driver.js';
import { openSqliteStore } from '../../src/store/sqlite.js';

/**
 * Fills a data directory with `count` finished tasks owned by `apiKey`, straight into SQLite in
 * large transactions (HTTP would take minutes for a million). Returns a sample of their ids.
 * `queued`: the tasks are queued instead (a backlog of the key, in fair order), each holding a
 * stored input of `inputBytes` (its reference in the row, its bytes counted for the key, as a
 * data-URL create leaves them), and all of them are video tasks.
 */
export async function seedTasks(
  dataDir: string,
  apiKey: string,
  count: number,
  sample = 5000,
  options: { readonly queued?: boolean; readonly inputBytes?: number } = {},
): Promise<{ video: string[]; image: string[] }> {
  const path = join(dataDir, 'mediagate.db');
  const store = openSqliteStore({ path, synchronous: 'NORMAL' });
  await store.migrate();
  await store.close();
  const db = openSqlite(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = OFF');
  const owner = envKeyId(hashKey(apiKey));
  const insert = db.prepare(
    `INSERT INTO tasks (id, kind, model, owner, status, progress, created_at, started_at, completed_at, error, outputs, attempt, params, fair_rank, input_bytes)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)`,
  );
  const queued = options.queued ?? false;
  const inputBytes = queued ? (options.inputBytes ?? 0) : 0;
  const video: string[] = [];
  const image: string[] = [];
  // Sample both kinds evenly across the table (ids are random, so position is not a hint).
  const every = Math.max(1, Math.floor(count / sample)) * 4 + 1;
  const now = Date.now();
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i += 1) {
      const isVideo = queued || i % 4 !== 0;
      const id = `${isVideo ? 'vid' : 'img'}_${randomBytes(16).toString('base64url')}`;
      const ext = isVideo ? 'mp4' : 'png';
      const model = isVideo ? 'vendora/famw-2.7-t2v' : 'vendora/famz-image-spicy';
      if (queued) {
        const params = { prompt: 'seeded', duration: 5, ...(inputBytes > 0 ? { image: `mediagate-input:image;image/png;${inputBytes}` } : {}) };
        insert.run(id, 'video', model, owner, 'queued', null, now - count + i, null, null, '[]', 0, JSON.stringify(params), i, inputBytes);
      } else {
        const outputs = JSON.stringify([
          { type: isVideo ? 'video' : 'image', key: `${id}/${randomBytes(9).toString('base64url')}.${ext}`, contentType: isVideo ? 'video/mp4' : 'image/png' },
        ]);
        const kind = isVideo ? 'video' : 'image';
        insert.run(
          id,
          kind,
          model,
          owner,
          'completed',
          100,
          now - 5000,
          now - 4000,
          now - 1000,
          outputs,
          1,
          JSON.stringify({ prompt: 'seeded', duration: 5 }),
          0,
          0,
        );
      }
      if (i % every === 0) (isVideo ? video : image).push(id);
    }
  });
  for (let from = 0; from < count; from += 50_000) batch(from, Math.min(count, from + 50_000));
  if (inputBytes > 0) db.prepare(`INSERT INTO key_inputs (owner, bytes) VALUES (?, ?)`).run(owner, inputBytes * count);
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  return { video, image };
}

/** What seedUsage wrote: the figures a report of the whole range must show. */
export interface SeededUsage {
  readonly tasks: number;
  readonly cost: number;
  readonly days: number;
  readonly models: number;
  /** Unix seconds: the range holding every seeded task (whole UTC days). */
  readonly start: number;
  readonly end: number;
}

const USAGE_MODELS = [
  'vendora/famw-2.7-t2v',
  'vendora/famw-2.7-i2v',
  'vendora/famw-3.0-i2v-spicy',
  'vendorb/famsd-2.0-mini-ref2v-spicy',
  'vendora/famz-image-spicy',
  'vendora/famz-image-spicy-pro',
] as const;

/**
 * `count` final tasks of `apiKey` spread over the last `days` UTC days and six models, with their
 * usage and cost, and the daily rollup (`usage_daily`) and key totals that the charge trigger
 * would have written for them, straight into SQLite (the trigger books transitions, not inserts).
 */
export async function seedUsage(dataDir: string, apiKey: string, count: number, days: number): Promise<SeededUsage> {
  const path = join(dataDir, 'mediagate.db');
  const store = openSqliteStore({ path, synchronous: 'NORMAL' });
  await store.migrate();
  await store.close();
  const db = openSqlite(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = OFF');
  const owner = envKeyId(hashKey(apiKey));
  db.prepare(`INSERT INTO api_keys (id, hash, name, created_at) VALUES (?, ?, 'env', ?) ON CONFLICT (hash) DO NOTHING`).run(owner, hashKey(apiKey), Date.now());
  const insert = db.prepare(
    `INSERT INTO tasks (id, kind, model, owner, status, progress, created_at, started_at, completed_at, error, outputs, attempt, params,
                        announced, usage_seconds, usage_images, cost)
     VALUES (?, ?, ?, ?, ?, 100, ?, ?, ?, NULL, '[]', 1, '{"prompt":"seeded"}', 1, ?, ?, ?)`,
  );
  const today = Math.floor(Date.now() / 86_400_000) * 86_400_000;
  const first = today - (days - 1) * 86_400_000;
  const rollup = new Map<string, { tasks: number; seconds: number; images: number; cost: number }>();
  let total = 0;
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i += 1) {
      const model = USAGE_MODELS[i % USAGE_MODELS.length] ?? USAGE_MODELS[0];
      const isVideo = !model.includes('image');
      const failed = i % 20 === 0;
      const seconds = failed || !isVideo ? 0 : 2 + (i % 9);
      const images = failed || isVideo ? 0 : 1;
      const cost = failed ? 0 : isVideo ? 100_000 + seconds * 80_000 : 20_000;
      const completedAt = first + Math.floor((i / count) * days * 86_400_000);
      const id = `${isVideo ? 'vid' : 'img'}_${randomBytes(16).toString('base64url')}`;
      insert.run(
        id,
        isVideo ? 'video' : 'image',
        model,
        owner,
        failed ? 'failed' : 'completed',
        completedAt - 5000,
        completedAt - 4000,
        completedAt,
        seconds,
        images,
        cost,
      );
      const key = `${model} ${new Date(completedAt).toISOString().slice(0, 10)}`;
      const sums = rollup.get(key) ?? { tasks: 0, seconds: 0, images: 0, cost: 0 };
      rollup.set(key, { tasks: sums.tasks + 1, seconds: sums.seconds + seconds, images: sums.images + images, cost: sums.cost + cost });
      total += cost;
    }
  });
  for (let from = 0; from < count; from += 50_000) batch(from, Math.min(count, from + 50_000));
  const upsert = db.prepare(`INSERT INTO usage_daily (key_id, model, day, tasks, seconds, images, cost) VALUES (?, ?, ?, ?, ?, ?, ?)`);
  db.transaction(() => {
    for (const [key, sums] of rollup) {
      const [model = '', day = ''] = key.split(' ');
      upsert.run(owner, model, day, sums.tasks, sums.seconds, sums.images, sums.cost);
    }
  })();
  db.prepare(`UPDATE api_keys SET spent = ?, spent_period = 0 WHERE id = ?`).run(total, owner);
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  return { tasks: count, cost: total, days, models: USAGE_MODELS.length, start: first / 1000, end: today / 1000 + 86_400 };
}

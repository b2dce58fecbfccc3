import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { hashKey } from '../../src/auth/api-keys.js';
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
  const owner = `key_${hashKey(apiKey).slice(0, 16)}`;
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

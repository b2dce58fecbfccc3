import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { hashKey } from '../../src/auth/api-keys.js';
import { openSqlite } from '../../src/store/sqlite-driver.js';
import { openSqliteStore } from '../../src/store/sqlite.js';

/**
 * Fills a data directory with `count` finished tasks owned by `apiKey`, straight into SQLite in
 * large transactions (HTTP would take minutes for a million). Returns a sample of their ids.
 */
export async function seedTasks(dataDir: string, apiKey: string, count: number, sample = 5000): Promise<{ video: string[]; image: string[] }> {
  const path = join(dataDir, 'mediagate.db');
  const store = openSqliteStore({ path, synchronous: 'NORMAL' });
  await store.migrate();
  await store.close();
  const db = openSqlite(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = OFF');
  const owner = `key_${hashKey(apiKey).slice(0, 16)}`;
  const insert = db.prepare(
    `INSERT INTO tasks (id, kind, model, owner, status, progress, created_at, started_at, completed_at, error, outputs, attempt, params)
     VALUES (?, ?, ?, ?, 'completed', 100, ?, ?, ?, NULL, ?, 1, ?)`,
  );
  const video: string[] = [];
  const image: string[] = [];
  // Sample both kinds evenly across the table (ids are random, so position is not a hint).
  const every = Math.max(1, Math.floor(count / sample)) * 4 + 1;
  const now = Date.now();
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i += 1) {
      const isVideo = i % 4 !== 0;
      const id = `${isVideo ? 'vid' : 'img'}_${randomBytes(16).toString('base64url')}`;
      const ext = isVideo ? 'mp4' : 'png';
      const outputs = JSON.stringify([
        { type: isVideo ? 'video' : 'image', key: `${id}/${randomBytes(9).toString('base64url')}.${ext}`, contentType: isVideo ? 'video/mp4' : 'image/png' },
      ]);
      const model = isVideo ? 'vendora/famw-2.7-t2v' : 'vendora/famz-image-spicy';
      insert.run(id, isVideo ? 'video' : 'image', model, owner, now - 5000, now - 4000, now - 1000, outputs, JSON.stringify({ prompt: 'seeded', duration: 5 }));
      if (i % every === 0) (isVideo ? video : image).push(id);
    }
  });
  for (let from = 0; from < count; from += 50_000) batch(from, Math.min(count, from + 50_000));
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  return { video, image };
}

import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CONTENT_TYPES, KEY_PATTERN, type OutputStorage, type StoredFile } from './storage.js';

/** Outputs on local disk under `<dataDir>/outputs/<task id>/`. Works across processes sharing the directory. */
export class LocalStorage implements OutputStorage {
  constructor(private readonly root: string) {}

  async put(taskId: string, sourcePath: string, ext: string): Promise<string> {
    const key = `${taskId}/${randomBytes(9).toString('base64url')}.${ext}`;
    if (!KEY_PATTERN.test(key)) throw new Error(`unsafe storage key ${key}`);
    await mkdir(join(this.root, taskId), { recursive: true });
    const target = join(this.root, key);
    try {
      await rename(sourcePath, target);
    } catch (error) {
      // Work dirs may sit on another filesystem than the data dir.
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      await copyFile(sourcePath, target);
      await unlink(sourcePath);
    }
    return key;
  }

  async delete(key: string): Promise<void> {
    if (!KEY_PATTERN.test(key)) return;
    await rm(join(this.root, key), { force: true });
    // The task's folder goes with its last file; one still holding others stays (ENOTEMPTY).
    await rmdir(dirname(join(this.root, key))).catch(() => {});
  }

  async discard(taskId: string): Promise<void> {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(taskId)) return;
    await rm(join(this.root, taskId), { recursive: true, force: true });
  }

  async open(key: string): Promise<StoredFile | undefined> {
    const match = KEY_PATTERN.exec(key);
    if (!match) return undefined;
    return openStoredFile(join(this.root, key), CONTENT_TYPES[match[1] ?? ''] ?? 'application/octet-stream');
  }

  async sweep(olderThanMs: number): Promise<number> {
    let removed = 0;
    let entries: string[];
    try {
      entries = await readdir(this.root);
    } catch {
      return 0;
    }
    for (const entry of entries) {
      const dir = join(this.root, entry);
      try {
        const info = await stat(dir);
        if (info.mtimeMs < olderThanMs) {
          await rm(dir, { recursive: true, force: true });
          removed += 1;
        }
      } catch {
        // Removed concurrently by another process's sweep.
      }
    }
    return removed;
  }
}

/** A regular file as a StoredFile (ranged streams), or undefined when it is missing or not a file. */
export async function openStoredFile(path: string, contentType: string): Promise<StoredFile | undefined> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return undefined;
    return {
      size: info.size,
      mtimeMs: info.mtimeMs,
      contentType,
      stream: (range) => createReadStream(path, range ? { start: range.start, end: range.end } : {}),
    };
  } catch {
    return undefined;
  }
}

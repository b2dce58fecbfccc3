import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readFile, readdir, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { assertSafeKey, type Blob, type BlobEntry, type BlobStore } from './blobs.js';

/**
 * Objects as files under one directory (the data directory): the embedded default. Works across
 * processes that share the directory. A put renames a finished file into place, so a reader never
 * sees one half-written.
 */
export class LocalBlobStore implements BlobStore {
  readonly kind = 'local';
  constructor(readonly root: string) {}

  get where(): string {
    return this.root;
  }

  private path(key: string): string {
    assertSafeKey(key);
    return join(this.root, key);
  }

  async putFile(key: string, path: string): Promise<void> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    try {
      await rename(path, target);
    } catch (error) {
      // Work dirs may sit on another filesystem than the data dir: copy beside the target, then rename.
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      const partial = `${target}.partial-${randomBytes(6).toString('hex')}`;
      await copyFile(path, partial);
      await rename(partial, target);
      await unlink(path);
    }
  }

  async putBytes(key: string, bytes: Buffer): Promise<void> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const partial = `${target}.partial-${randomBytes(6).toString('hex')}`;
    await writeFile(partial, bytes);
    await rename(partial, target);
  }

  async open(key: string): Promise<Blob | undefined> {
    const path = this.path(key);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    return {
      size: info.size,
      mtimeMs: info.mtimeMs,
      stream: (range) => createReadStream(path, range ? { start: range.start, end: range.end } : {}),
    };
  }

  async read(key: string): Promise<Buffer | undefined> {
    return readFile(this.path(key)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
  }

  async delete(key: string): Promise<void> {
    const path = this.path(key);
    await rm(path, { force: true });
    // A folder goes with its last file; one still holding others stays (ENOTEMPTY). The
    // top-level folders (`outputs`, `inputs`) stay: a put may be about to write into them.
    for (let dir = dirname(path); dir.startsWith(this.root) && dirname(dir) !== this.root && dir !== this.root; dir = dirname(dir)) {
      if (
        !(await rmdir(dir).then(
          () => true,
          () => false,
        ))
      )
        break;
    }
  }

  async *list(prefix: string): AsyncIterable<BlobEntry> {
    if (prefix !== '') assertSafeKey(prefix.replace(/\/$/, ''));
    yield* this.walk(prefix.replace(/\/$/, ''));
  }

  async close(): Promise<void> {}

  private async *walk(key: string): AsyncIterable<BlobEntry> {
    const dir = key === '' ? this.root : join(this.root, key);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const child = key === '' ? entry.name : `${key}/${entry.name}`;
      if (entry.isDirectory()) yield* this.walk(child);
      else if (entry.isFile()) {
        // Removed meanwhile by another process's sweep: not listed.
        const info = await stat(join(this.root, child)).catch(() => undefined);
        if (info) yield { key: child, size: info.size, mtimeMs: info.mtimeMs };
      }
    }
  }
}

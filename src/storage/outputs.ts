import { randomBytes } from 'node:crypto';
import { deletePrefix, folderAges, type BlobStore } from './blobs.js';
import type { PresignOutput } from './output-urls.js';
import { CONTENT_TYPES, KEY_PATTERN, type OutputStorage, type StoredFile } from './storage.js';

const TASK_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Outputs in a BlobStore under `outputs/<task id>/` (the data directory's `outputs` folder, or
 * the bucket's `<prefix>outputs/`). The output key (`<task id>/<name>.<ext>`, what URLs carry)
 * is the object's key without the folder.
 */
export class OutputFiles implements OutputStorage {
  constructor(
    readonly blobs: BlobStore,
    private readonly folder = 'outputs/',
  ) {}

  async put(taskId: string, sourcePath: string, ext: string): Promise<string> {
    const key = `${taskId}/${randomBytes(9).toString('base64url')}.${ext}`;
    if (!KEY_PATTERN.test(key)) throw new Error(`unsafe storage key ${key}`);
    await this.blobs.putFile(this.folder + key, sourcePath, CONTENT_TYPES[ext] ?? 'application/octet-stream');
    return key;
  }

  async delete(key: string): Promise<void> {
    if (KEY_PATTERN.test(key)) await this.blobs.delete(this.folder + key);
  }

  async discard(taskId: string): Promise<void> {
    if (TASK_ID.test(taskId)) await deletePrefix(this.blobs, `${this.folder}${taskId}/`);
  }

  async open(key: string): Promise<StoredFile | undefined> {
    const match = KEY_PATTERN.exec(key);
    if (!match) return undefined;
    const blob = await this.blobs.open(this.folder + key);
    if (!blob) return undefined;
    return {
      size: blob.size,
      mtimeMs: blob.mtimeMs,
      contentType: CONTENT_TYPES[match[1] ?? ''] ?? 'application/octet-stream',
      stream: (range) => blob.stream(range),
    };
  }

  /**
   * The store's presigned URLs of outputs, when it has them (S3): what `/files` would answer
   * with, as far as a store can (type, inline disposition; `no-cache`, since a fixed max-age
   * could outlive the URL).
   */
  presigner(): PresignOutput | undefined {
    const presignGet = this.blobs.presignGet?.bind(this.blobs);
    if (presignGet === undefined) return undefined;
    return (key, signedAtMs, expiresS) => {
      const match = KEY_PATTERN.exec(key);
      const name = key.split('/')[1] ?? '';
      return presignGet(this.folder + key, new Date(signedAtMs), expiresS, {
        contentType: CONTENT_TYPES[match?.[1] ?? ''] ?? 'application/octet-stream',
        contentDisposition: `inline; filename="${name}"`,
        cacheControl: 'private, no-cache',
      });
    };
  }

  async sweep(olderThanMs: number): Promise<number> {
    let removed = 0;
    for (const [taskId, newest] of await folderAges(this.blobs, this.folder)) {
      if (newest >= olderThanMs) continue;
      await deletePrefix(this.blobs, `${this.folder}${taskId}/`);
      removed += 1;
    }
    return removed;
  }
}

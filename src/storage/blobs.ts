import type { Readable } from 'node:stream';

/** One stored object: its length, when it was written, and its bytes (whole or one range). */
export interface Blob {
  readonly size: number;
  readonly mtimeMs: number;
  /** The bytes from `start` to `end` inclusive, or all of them; streamed, never held whole. */
  stream(range?: { start: number; end: number }): Readable;
}

/** A stored object as a listing shows it. */
export interface BlobEntry {
  readonly key: string;
  readonly size: number;
  readonly mtimeMs: number;
}

/**
 * The one seam every media byte goes through: rendered outputs, copies of upstream outputs,
 * stored and published inputs. Two implementations: a directory (local-blobs.ts, the embedded
 * default) and an S3-compatible bucket (s3/blobs.ts). Keys are `/`-separated paths of URL-safe
 * segments (`outputs/<task>/<name>`); the layers above validate them, the stores refuse `..`.
 *
 * Nothing half-written is ever visible: a put becomes visible whole or not at all (a rename on
 * disk, a single PUT on S3), so a process killed during an upload leaves no partial object.
 */
export interface BlobStore {
  /** `local` or `s3`: for start-up lines and `mediagate storage check`. */
  readonly kind: 'local' | 's3';
  /** Where the objects are, for an operator (a directory, or `s3://bucket/prefix`). */
  readonly where: string;
  /** Moves the file at `path` into the store at `key` (the file is gone afterwards). */
  putFile(key: string, path: string, contentType: string): Promise<void>;
  putBytes(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The object at `key`, or undefined when there is none. */
  open(key: string): Promise<Blob | undefined>;
  /** The whole object in memory (inputs small enough for a data URL), or undefined. */
  read(key: string): Promise<Buffer | undefined>;
  /** Deletes the object; one that is not there is no error. */
  delete(key: string): Promise<void>;
  /** Every object whose key starts with `prefix` (which ends with `/`), in no set order. */
  list(prefix: string): AsyncIterable<BlobEntry>;
  /**
   * A GET URL of the object the store itself signs (S3 only), valid `expiresS` seconds from
   * `signedAt`, answering with `responseHeaders` (Content-Type, Content-Disposition, Cache-Control).
   */
  presignGet?(
    key: string,
    signedAt: Date,
    expiresS: number,
    responseHeaders: { contentType: string; contentDisposition: string; cacheControl: string },
  ): string;
  /** Closes the connections it holds. */
  close(): Promise<void>;
}

/** A key the stores accept: relative, `/`-separated, no empty, `.` or `..` segment. */
export function assertSafeKey(key: string): void {
  if (!/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(key) || key.split('/').some((part) => part === '.' || part === '..')) {
    throw new Error(`unsafe storage key ${JSON.stringify(key.slice(0, 200))}`);
  }
}

/** Deletes every object under `prefix`; returns how many. */
export async function deletePrefix(blobs: BlobStore, prefix: string): Promise<number> {
  const keys: string[] = [];
  for await (const entry of blobs.list(prefix)) keys.push(entry.key);
  for (const key of keys) await blobs.delete(key);
  return keys.length;
}

/**
 * The folders directly under `prefix` (the first segment after it) and the newest write in each:
 * how the sweeps age a task's outputs or inputs on either store, by listing, not by assuming.
 */
export async function folderAges(blobs: BlobStore, prefix: string): Promise<Map<string, number>> {
  const newest = new Map<string, number>();
  for await (const entry of blobs.list(prefix)) {
    const folder = entry.key.slice(prefix.length).split('/')[0] ?? '';
    if (folder === '') continue;
    newest.set(folder, Math.max(newest.get(folder) ?? 0, entry.mtimeMs));
  }
  return newest;
}

import type { Readable } from 'node:stream';

/** A stored output file: the bytes, their length and type. */
export interface StoredFile {
  readonly size: number;
  readonly contentType: string;
  readonly mtimeMs: number;
  stream(range?: { start: number; end: number }): Readable;
}

/**
 * Where outputs live: `OutputFiles` (outputs.ts) on the media store, the data directory or an
 * S3 bucket (blobs.ts). Keys look like `<task id>/<random>.<ext>` and are safe path segments.
 */
export interface OutputStorage {
  /** Moves a finished file into storage and returns its key. */
  put(taskId: string, sourcePath: string, ext: string): Promise<string>;
  delete(key: string): Promise<void>;
  /** Deletes every output of a task (files of attempts that stopped before settling). */
  discard(taskId: string): Promise<void>;
  open(key: string): Promise<StoredFile | undefined>;
  /** Deletes outputs older than `olderThanMs`; returns how many task folders were removed. */
  sweep(olderThanMs: number): Promise<number>;
}

export const CONTENT_TYPES: Readonly<Record<string, string>> = { mp4: 'video/mp4', png: 'image/png' };

/** A key is `<id>/<name>.<ext>` of URL-safe characters; anything else never reaches the disk. */
export const KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}\/[A-Za-z0-9_-]{1,64}\.(mp4|png)$/;

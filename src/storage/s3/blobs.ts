import { createReadStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { PassThrough, pipeline } from 'node:stream';
import { readCapped } from '../../outbound/client.js';
import { assertSafeKey, type Blob, type BlobEntry, type BlobStore } from '../blobs.js';
import type { S3Client } from './client.js';

/** Largest object `read` takes into memory: a stored input is under the request body limit. */
const MAX_READ_BYTES = 1024 ** 3;

/**
 * Objects in an S3-compatible bucket, under a key prefix. Uploads stream from the file (a single
 * PUT of known length: S3 makes the object visible only once it is whole, so a process killed
 * mid-upload leaves nothing); downloads stream the store's answer through, ranges included.
 */
export class S3BlobStore implements BlobStore {
  readonly kind = 's3';

  constructor(
    readonly client: S3Client,
    private readonly bucket: string,
    /** `''` or a prefix ending with `/`. */
    private readonly prefix: string,
  ) {}

  get where(): string {
    return `s3://${this.bucket}/${this.prefix}`;
  }

  /** The object's key in the bucket. */
  objectKey(key: string): string {
    assertSafeKey(key);
    return this.prefix + key;
  }

  async putFile(key: string, path: string, contentType: string): Promise<void> {
    const { size } = await stat(path);
    await this.client.putObject(this.objectKey(key), createReadStream(path), size, contentType);
    await unlink(path);
  }

  async putBytes(key: string, bytes: Buffer, contentType: string): Promise<void> {
    await this.client.putObject(this.objectKey(key), bytes, bytes.length, contentType);
  }

  async open(key: string): Promise<Blob | undefined> {
    const objectKey = this.objectKey(key);
    const head = await this.client.headObject(objectKey);
    if (!head) return undefined;
    return {
      size: head.size,
      mtimeMs: head.mtimeMs,
      stream: (range) => {
        // The GET starts when asked for; its body flows through as the reader takes it.
        const out = new PassThrough();
        const abort = new AbortController();
        out.once('close', () => abort.abort());
        this.client.getObject(objectKey, range, abort.signal).then(
          (body) => {
            if (body === undefined) out.destroy(new Error(`object ${key} is gone`));
            else pipeline(body, out, () => {});
          },
          (error: unknown) => out.destroy(error instanceof Error ? error : new Error(String(error))),
        );
        return out;
      },
    };
  }

  async read(key: string): Promise<Buffer | undefined> {
    const body = await this.client.getObject(this.objectKey(key));
    if (body === undefined) return undefined;
    const bytes = await readCapped(body, MAX_READ_BYTES);
    if (bytes === undefined) throw new Error(`object ${key} is larger than ${MAX_READ_BYTES} bytes`);
    return bytes;
  }

  async delete(key: string): Promise<void> {
    await this.client.deleteObject(this.objectKey(key));
  }

  presignGet(key: string, signedAt: Date, expiresS: number, headers: { contentType: string; contentDisposition: string; cacheControl: string }): string {
    return this.client.presign(this.objectKey(key), signedAt, expiresS, {
      'response-content-type': headers.contentType,
      'response-content-disposition': headers.contentDisposition,
      'response-cache-control': headers.cacheControl,
    });
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  async *list(prefix: string): AsyncIterable<BlobEntry> {
    if (prefix !== '') assertSafeKey(prefix.replace(/\/$/, ''));
    for await (const object of this.client.list(this.prefix + prefix)) {
      yield { key: object.key.slice(this.prefix.length), size: object.size, mtimeMs: object.mtimeMs };
    }
  }
}

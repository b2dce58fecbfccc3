import type { UrlSigner } from './signing.js';

/** A signed, expiring URL of an output file, from its storage key and its task's completion time. */
export type UrlFor = (key: string, completedAt: number) => string;

/**
 * The store's own presigned GET URL of an output (MEDIAGATE_OUTPUT_URLS=presigned): signed at
 * `signedAtMs`, valid `expiresS` seconds.
 */
export type PresignOutput = (key: string, signedAtMs: number, expiresS: number) => string;

export interface OutputUrlOptions {
  readonly signer: UrlSigner;
  /** Base of the URLs; a function because a port-0 server learns its address only at listen. */
  readonly publicUrl: () => string;
  readonly outputTtlMs: number;
  /** Presigned mode: the store signs the URLs (same lifetime); absent: `/files` URLs of the service. */
  readonly presign?: PresignOutput | undefined;
}

/**
 * Signed, expiring output URLs. A finished task's URL never changes (its expiry derives from
 * the completion time), and clients poll finished tasks again and again: each output is
 * signed once and remembered (up to 10,000, then forgotten all at once), and forgotten when the
 * signing secret is rotated (a URL of a retired secret would stop working).
 */
export function createOutputUrls(options: OutputUrlOptions): UrlFor {
  const signed = new Map<string, string>();
  let generation = options.signer.generation;
  return (key, completedAt) => {
    if (options.signer.generation !== generation) {
      signed.clear();
      generation = options.signer.generation;
    }
    let url = signed.get(key);
    if (url === undefined) {
      // Whole seconds since the epoch: the unit of the URL's `exp`.
      const exp = Math.floor((completedAt + options.outputTtlMs) / 1000);
      // Presigned: signed as of the completion, so the URL is as stable as a `/files` one.
      url = options.presign
        ? options.presign(key, completedAt, Math.max(1, exp - Math.floor(completedAt / 1000)))
        : `${options.publicUrl()}/files/${key}?exp=${exp}&sig=${options.signer.sign(key, exp)}`;
      if (signed.size >= 10_000) signed.clear();
      signed.set(key, url);
    }
    return url;
  };
}

import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { KeyStore } from '../store/store.js';

/**
 * API keys: accepted from MEDIAGATE_API_KEYS or created by the service (`mediagate keys
 * create`, or at first start); only their SHA-256 hashes are stored. A key's id (not the key)
 * is the owner recorded on its tasks.
 *
 * Keys made here look like `mg_` + 30 random base62 characters (178 bits) + a 6-character
 * base62 CRC32 of those 30: recognisable in a leaked file or a secret scanner, and a typo or a
 * forged key fails the checksum before any database work. Keys of any other format
 * (configured, or made by an older version) go through the hash lookup as before.
 */

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 30;
const CHECKSUM_CHARS = 6;
/** The shape of a key made by mediagate; only a key of this shape has a checksum to check. */
export const KEY_SHAPE = /^mg_[0-9A-Za-z]{36}$/;

function base62(value: number, width: number): string {
  let out = '';
  for (let rest = value; out.length < width; rest = Math.floor(rest / 62)) out = BASE62[rest % 62] + out;
  return out;
}

function checksum(body: string): string {
  return base62(crc32(body), CHECKSUM_CHARS);
}

export function generateKey(): string {
  let body = '';
  while (body.length < RANDOM_CHARS) {
    // Rejection sampling: bytes 248..255 would bias the first characters.
    for (const byte of randomBytes(40)) {
      if (byte < 248 && body.length < RANDOM_CHARS) body += BASE62[byte % 62];
    }
  }
  return `mg_${body}${checksum(body)}`;
}

/** Whether a key of mediagate's shape carries a valid checksum (false for other shapes). */
export function hasValidChecksum(key: string): boolean {
  if (!KEY_SHAPE.test(key)) return false;
  const body = key.slice(3, 3 + RANDOM_CHARS);
  return key.slice(3 + RANDOM_CHARS) === checksum(body);
}

/** No key is longer, or has characters outside printable ASCII: such a token is refused unseen. */
const PLAUSIBLE_KEY = /^[\x21-\x7e]{8,256}$/;

export interface KeyRegistryOptions {
  readonly store: KeyStore;
  /** Keys accepted from the environment; registered (as hashes) at start. */
  readonly configured: readonly string[];
  /** How long a successful lookup is trusted before the store is asked again (revocation delay). */
  readonly cacheMs?: number;
}

export class KeyRegistry {
  private readonly cache = new Map<string, { id: string; until: number }>();
  private readonly cacheMs: number;
  /** Configured keys are accepted whatever their shape, even one that looks like ours. */
  private readonly configuredHashes: ReadonlySet<string>;
  /** Tokens refused without a database lookup (malformed, or a bad checksum). */
  refusedUnseen = 0;

  constructor(private readonly options: KeyRegistryOptions) {
    this.cacheMs = options.cacheMs ?? 5000;
    this.configuredHashes = new Set(options.configured.map(hashKey));
  }

  /**
   * Whether a presented token could be a key at all, decided without the store: printable
   * ASCII of a sane length, and for a key of mediagate's shape, a valid checksum.
   */
  private plausible(key: string, hash: () => string): boolean {
    if (!PLAUSIBLE_KEY.test(key)) return false;
    if (KEY_SHAPE.test(key) && !hasValidChecksum(key) && !this.configuredHashes.has(hash())) return false;
    return true;
  }

  /**
   * Registers configured keys. When none is configured and the store holds no key yet, creates
   * one and returns it: the caller prints it once; it is not recoverable afterwards.
   */
  async init(): Promise<string | undefined> {
    const now = Date.now();
    const hashes = this.options.configured.map(hashKey);
    for (const hash of hashes) {
      // The id derives from the hash, so a key keeps its tasks across restarts and processes.
      await this.options.store.insertKey({ id: `key_${hash.slice(0, 16)}`, hash, name: 'env', createdAt: now });
    }
    await this.options.store.syncEnvKeys(hashes, now);
    if (this.options.configured.length > 0 || (await this.options.store.countKeys()) > 0) return undefined;
    const key = generateKey();
    await this.create(key, 'generated at first start');
    return key;
  }

  async create(key: string, name: string): Promise<string> {
    const hash = hashKey(key);
    const id = `key_${randomBytes(8).toString('hex')}`;
    await this.options.store.insertKey({ id, hash, name, createdAt: Date.now() });
    return id;
  }

  /**
   * The owner id for a key looked up less than `cacheMs` ago, without hashing or the store;
   * undefined when it is not cached (call resolve()). The cache is keyed by the presented
   * token: the hash is what the store is asked for, not what a cache needs.
   */
  resolveCached(key: string): string | undefined {
    const cached = this.cache.get(key);
    return cached !== undefined && cached.until > Date.now() ? cached.id : undefined;
  }

  /** The owner id for a presented key, or undefined when it is unknown or revoked. */
  async resolve(key: string): Promise<string | undefined> {
    const cached = this.resolveCached(key);
    if (cached !== undefined) return cached;
    return this.resolveFresh(key);
  }

  /**
   * As resolve(), but always asks the store (and refreshes or drops the cached answer): what a
   * long-lived request (an event stream) uses to learn that its key was revoked since.
   */
  async resolveFresh(key: string): Promise<string | undefined> {
    let memo: string | undefined;
    const hashOnce = (): string => (memo ??= hashKey(key));
    if (!this.plausible(key, hashOnce)) {
      this.refusedUnseen += 1;
      return undefined;
    }
    const found = await this.options.store.findKeyByHash(hashOnce());
    if (!found || found.revoked) {
      this.cache.delete(key);
      return undefined;
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(key, { id: found.id, until: Date.now() + this.cacheMs });
    return found.id;
  }
}

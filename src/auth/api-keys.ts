import { outageOf } from '../outages.js';
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { KeyAuthRecord, KeyRole, KeySettings, KeyStore } from '../store/store.js';
import { modelFilter } from './key-settings.js';

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
  /** Client keys accepted from the environment (MEDIAGATE_API_KEYS); registered (as hashes) at start. */
  readonly configured: readonly string[];
  /** Admin keys accepted from the environment (MEDIAGATE_ADMIN_KEYS). */
  readonly configuredAdmin?: readonly string[];
  /**
   * How long a successful lookup is trusted before the store is asked again: the longest a
   * revoke, a disable or a change of settings takes to reach this process. At most 5 s.
   */
  readonly cacheMs?: number;
}

/**
 * A key as every request sees it, from the cache: who it is and the settings that apply to
 * each request (docs/admin.md). Budgets are not here: the create's reservation reads them.
 */
export interface KeyInfo {
  /** The key's id: the owner recorded on its tasks. */
  readonly id: string;
  readonly role: KeyRole;
  /** Whether the key may use a model; undefined: every model. */
  readonly allowsModel: ((model: string) => boolean) | undefined;
  /** Its own requests per minute; null: the process-wide default. */
  readonly rateLimitPerMin: number | null;
  /** Its own queued + processing tasks; null: the process-wide default. */
  readonly maxTasksInFlight: number | null;
}

function infoOf(record: KeyAuthRecord): KeyInfo {
  return {
    id: record.id,
    role: record.role,
    allowsModel: modelFilter(record.models),
    rateLimitPerMin: record.rateLimitPerMin,
    maxTasksInFlight: record.maxTasksInFlight,
  };
}

/** The id of a key from the environment: derived from its hash, the same on every start and process. */
export const envKeyId = (hash: string): string => `key_${hash.slice(0, 16)}`;

export class KeyRegistry {
  private readonly cache = new Map<string, { info: KeyInfo; until: number }>();
  private readonly cacheMs: number;
  /** Configured keys are accepted whatever their shape, even one that looks like ours. */
  private readonly configuredHashes: ReadonlySet<string>;
  private adminKeys: { count: number; until: number; pending: Promise<number> | undefined } = { count: 0, until: 0, pending: undefined };
  private readonly forgetListeners = new Set<() => void>();
  /** Bumped by forgetAll(): a lookup begun before it is not cached. */
  private generation = 0;
  /** Tokens refused without a database lookup (malformed, or a bad checksum). */
  refusedUnseen = 0;

  constructor(private readonly options: KeyRegistryOptions) {
    this.cacheMs = Math.min(options.cacheMs ?? 5000, 5000);
    this.configuredHashes = new Set([...options.configured, ...(options.configuredAdmin ?? [])].map(hashKey));
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
   * Registers configured keys (client and admin) and revokes environment keys no longer
   * configured; their names and settings stay as an operator set them. When none is configured
   * and the store holds no key yet, creates a client key and returns it: the caller prints it
   * once; it is not recoverable afterwards.
   */
  async init(): Promise<string | undefined> {
    const now = Date.now();
    const configured = [
      ...this.options.configured.map((key) => ({ hash: hashKey(key), role: 'client' as const })),
      ...(this.options.configuredAdmin ?? []).map((key) => ({ hash: hashKey(key), role: 'admin' as const })),
    ];
    for (const { hash, role } of configured) {
      // The id derives from the hash, so a key keeps its tasks across restarts and processes.
      await this.options.store.insertKey({ id: envKeyId(hash), hash, name: 'env', createdAt: now, role });
    }
    await this.options.store.syncEnvKeys(configured, now);
    if (configured.length > 0 || (await this.options.store.countKeys()) > 0) return undefined;
    const key = generateKey();
    await this.create(key, 'generated at first start');
    return key;
  }

  private lastCreatedAt = 0;

  /** Stores a new key with its role and settings; returns its id. */
  async create(key: string, name: string, options: { role?: KeyRole; settings?: Partial<KeySettings> } = {}): Promise<string> {
    const hash = hashKey(key);
    const id = `key_${randomBytes(8).toString('hex')}`;
    // Strictly rising within a process, so keys made in one millisecond still list newest first
    // (the list orders by creation time, and ids are random).
    const createdAt = Math.max(Date.now(), this.lastCreatedAt + 1);
    this.lastCreatedAt = createdAt;
    await this.options.store.insertKey({ ...options.settings, id, hash, name, createdAt, role: options.role ?? 'client' });
    return id;
  }

  /**
   * The key looked up less than `cacheMs` ago, without hashing or the store; undefined when it
   * is not cached (call resolve()). The cache is keyed by the presented token: the hash is what
   * the store is asked for, not what a cache needs.
   */
  resolveCached(key: string): KeyInfo | undefined {
    const cached = this.cache.get(key);
    return cached !== undefined && cached.until > Date.now() ? cached.info : undefined;
  }

  /** The key for a presented token, or undefined when it is unknown, revoked or disabled. */
  async resolve(key: string): Promise<KeyInfo | undefined> {
    const cached = this.resolveCached(key);
    if (cached !== undefined) return cached;
    try {
      return await this.resolveFresh(key);
    } catch (error) {
      // The database is unreachable: a key this process knew keeps its last answer, so that
      // what needs no database (polls of final tasks held in memory) still answers; whatever
      // needs it fails as the outage (503) anyway, and no key can change meanwhile.
      const stale = this.cache.get(key);
      if (stale !== undefined && outageOf(error) === 'database') return stale.info;
      throw error;
    }
  }

  /**
   * As resolve(), but always asks the store (and refreshes or drops the cached answer): what a
   * long-lived request (an event stream) uses to learn that its key was revoked since.
   */
  async resolveFresh(key: string): Promise<KeyInfo | undefined> {
    let memo: string | undefined;
    const hashOnce = (): string => (memo ??= hashKey(key));
    if (!this.plausible(key, hashOnce)) {
      this.refusedUnseen += 1;
      return undefined;
    }
    const generation = this.generation;
    const found = await this.options.store.findKeyByHash(hashOnce());
    if (!found || found.revoked || found.disabled) {
      this.cache.delete(key);
      return undefined;
    }
    const info = infoOf(found);
    // A read that a forgetAll() overtook may predate the change: answered, not kept.
    if (generation !== this.generation) return info;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(key, { info, until: Date.now() + this.cacheMs });
    return info;
  }

  /**
   * Drops every cached lookup and the admin key count: a key changed (here, or in another
   * process that notified it), so the next request of each key asks the store.
   */
  forgetAll(): void {
    this.generation += 1;
    this.cache.clear();
    this.adminKeys = { count: 0, until: 0, pending: undefined };
    for (const listener of this.forgetListeners) listener();
  }

  /** Hears each forgetAll(): a key changed (event streams check their keys again at once); returns the unsubscribe. */
  onForget(listener: () => void): () => void {
    this.forgetListeners.add(listener);
    return () => this.forgetListeners.delete(listener);
  }

  /**
   * Whether any admin key works (neither revoked nor disabled): without one the admin API is
   * not there. Counted in the store at most once per `cacheMs`, like a key's lookup.
   */
  async hasAdminKeys(): Promise<boolean> {
    const state = this.adminKeys;
    if (state.until > Date.now()) return state.count > 0;
    const generation = this.generation;
    state.pending ??= this.options.store.countAdminKeys().then(
      (count) => {
        // A count a forgetAll() overtook is answered, not kept (forgetAll replaced `state`).
        if (generation === this.generation) this.adminKeys = { count, until: Date.now() + this.cacheMs, pending: undefined };
        return count;
      },
      (error: unknown) => {
        state.pending = undefined;
        throw error;
      },
    );
    return (await state.pending) > 0;
  }
}

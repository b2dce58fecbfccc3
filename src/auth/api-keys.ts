import { createHash, randomBytes } from 'node:crypto';
import type { TaskStore } from '../tasks/store/store.js';

/**
 * API keys: accepted from MEDIAGATE_API_KEYS or created by the service; only their SHA-256
 * hashes are stored. A key's id (not the key) is the owner recorded on its tasks.
 */

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export function generateKey(): string {
  return `mg_${randomBytes(24).toString('base64url')}`;
}

export interface KeyRegistryOptions {
  readonly store: TaskStore;
  /** Keys accepted from the environment; registered (as hashes) at start. */
  readonly configured: readonly string[];
  /** How long a successful lookup is trusted before the store is asked again (revocation delay). */
  readonly cacheMs?: number;
}

export class KeyRegistry {
  private readonly cache = new Map<string, { id: string; until: number }>();
  private readonly cacheMs: number;

  constructor(private readonly options: KeyRegistryOptions) {
    this.cacheMs = options.cacheMs ?? 5000;
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

  /** The owner id for a presented key, or undefined when it is unknown or revoked. */
  async resolve(key: string): Promise<string | undefined> {
    const hash = hashKey(key);
    const now = Date.now();
    const cached = this.cache.get(hash);
    if (cached && cached.until > now) return cached.id;
    const found = await this.options.store.findKeyByHash(hash);
    if (!found || found.revoked) {
      this.cache.delete(hash);
      return undefined;
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(hash, { id: found.id, until: now + this.cacheMs });
    return found.id;
  }
}

import { Loop } from '../../loop.js';
import { errors } from '../../errors.js';
import type { KeyRegistry } from '../../auth/api-keys.js';

/**
 * The event streams open in this API process, per key, and what bounds them:
 * - at most `maxPerKey` at once: one key cannot hold the process's connections (the others
 *   then get 429 `rate_limit_exceeded`, in the family's envelope, with `Retry-After`);
 * - each lives at most `maxLifetimeMs`, then ends without a final event: a client reconnects
 *   with `Last-Event-ID` and misses nothing (the SDK does);
 * - every `keyCheckMs`, and at once when a key changed (the registry's forgetAll(): the admin
 *   API here, or another process's notification on PostgreSQL), the keys of open streams are
 *   looked up in the store again (not from the key cache): a revoked or disabled key's streams
 *   end then.
 */
export interface EventStreamLimits {
  /** MEDIAGATE_SSE_MAX_PER_KEY. */
  readonly maxPerKey: number;
  /** MEDIAGATE_SSE_MAX_LIFETIME_S, held in ms. */
  readonly maxLifetimeMs: number;
  /** How often the keys of open streams are checked again. */
  readonly keyCheckMs: number;
}

export const DEFAULT_EVENT_STREAM_LIMITS: EventStreamLimits = { maxPerKey: 100, maxLifetimeMs: 30 * 60_000, keyCheckMs: 2000 };

/** What the caller's stream does when it must end (lifetime over, key revoked, server closing). */
type End = () => void;

interface KeyStreams {
  /** The presented token, looked up again at each check (every stream of an owner came with its key). */
  token: string;
  readonly ends: Set<End>;
}

export class EventStreams {
  private readonly byOwner = new Map<string, KeyStreams>();
  /**
   * Checks the keys every keyCheckMs while streams are open. A change heard during a check
   * runs it again (the loop's wake-up during a turn), since it may have read a key before the change.
   */
  private readonly checker: Loop;
  private readonly unwatchKeys: () => void;

  constructor(
    private readonly keys: KeyRegistry,
    private readonly limits: EventStreamLimits = DEFAULT_EVENT_STREAM_LIMITS,
  ) {
    this.checker = new Loop({
      name: 'event-stream-keys',
      immediate: false,
      intervalMs: limits.keyCheckMs,
      turn: () => this.runChecks(),
      // runChecks skips a key the store did not answer for; nothing else in it throws.
      onError: () => undefined,
    });
    this.unwatchKeys = keys.onForget(() => {
      if (this.byOwner.size > 0) void this.checkKeys();
    });
  }

  /** Open streams of `owner` in this process. */
  count(owner: string): number {
    return this.byOwner.get(owner)?.ends.size ?? 0;
  }

  /**
   * Takes a stream slot of `owner`, or throws the 429 when the key holds its `maxPerKey`.
   * `end` is called at most once, when the stream must end; the returned release gives the
   * slot back (call it when the stream ends, whatever ended it).
   */
  open(owner: string, token: string, end: End): () => void {
    let entry = this.byOwner.get(owner);
    if ((entry?.ends.size ?? 0) >= this.limits.maxPerKey) {
      throw errors.rateLimited(`This API key has ${this.limits.maxPerKey} event streams open, the most one key may hold; close one or poll the task.`, {
        'retry-after': '5',
      });
    }
    if (entry === undefined) {
      entry = { token, ends: new Set() };
      this.byOwner.set(owner, entry);
    }
    entry.token = token;
    let ended = false;
    const once: End = () => {
      if (ended) return;
      ended = true;
      end();
    };
    entry.ends.add(once);
    const lifetime = setTimeout(once, this.limits.maxLifetimeMs);
    lifetime.unref();
    this.armChecker();
    const slots = entry;
    return () => {
      clearTimeout(lifetime);
      ended = true;
      slots.ends.delete(once);
      if (slots.ends.size === 0 && this.byOwner.get(owner) === slots) this.byOwner.delete(owner);
      if (this.byOwner.size === 0) this.disarmChecker();
    };
  }

  /**
   * Looks up every owner's key in the store; ends the streams of a key no longer valid. Asked
   * while a check runs, it has that check run again (it may have read a key before the change)
   * and resolves when the check is done.
   */
  checkKeys(): Promise<void> {
    return this.checker.drain();
  }

  private async runChecks(): Promise<void> {
    for (const [owner, entry] of [...this.byOwner]) {
      let valid: boolean;
      try {
        valid = (await this.keys.resolveFresh(entry.token))?.id === owner;
      } catch {
        // A store that does not answer proves nothing: the next check asks again.
        continue;
      }
      if (!valid) for (const end of [...entry.ends]) end();
    }
  }

  close(): void {
    this.unwatchKeys();
    this.disarmChecker();
  }

  private armChecker(): void {
    this.checker.start();
  }

  private disarmChecker(): void {
    void this.checker.stop();
  }
}

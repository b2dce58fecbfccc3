/**
 * Limits per API key, kept in memory in each API process:
 * - requests per minute: a token bucket per key id (capacity = the per-minute quota, refilled
 *   continuously), checked by the auth hook on every authenticated request;
 * - tasks in flight (queued + processing): counted from the store, cached for a second per key
 *   and bumped locally on each creation, checked before a task is created.
 * Over a limit: 429 `rate_limit_exceeded` with `Retry-After`, `RateLimit-Policy` and `RateLimit`
 * (IETF draft-ietf-httpapi-ratelimit-headers structured fields). With several API processes
 * (PostgreSQL scale-out), the request quota applies per process; the in-flight count is global
 * (it is read from the shared store) and cached, a quick early answer; the insert's transaction
 * decides, under the key row's lock (the key guard, store/sql/hot-paths.ts), so no burst through any number of
 * processes passes it. 0 turns a limit off. A key's own settings (`rate_limit_per_min`,
 * `max_tasks_in_flight`; docs/admin.md) replace the defaults for that key: the callers pass them
 * from the key's cached lookup.
 *
 * Guarded by test/hardening-http.test.ts.
 */
import { errors } from '../../errors.js';

export interface KeyLimitsOptions {
  /** Requests per minute per key; 0 = no limit. */
  readonly requestsPerMinute: number;
  /** Queued + processing tasks per key; 0 = no limit. */
  readonly tasksInFlight: number;
  /** Counts an owner's queued and processing tasks, up to `cap` (the store). */
  readonly countActive: (owner: string, cap: number) => Promise<number>;
  /** Bytes of stored inputs (decoded data URLs) per key over its queued and processing tasks; 0 = no limit. */
  readonly inputBytesPerKey?: number;
  /** An owner's stored input bytes over its queued and processing tasks (the store's counter). */
  readonly activeInputBytes?: (owner: string) => Promise<number>;
  readonly now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

interface InFlight {
  count: number;
  at: number;
  pending: Promise<number> | undefined;
}

/** How long a counted in-flight number is trusted; shorter once the key is at its limit. */
const IN_FLIGHT_FRESH_MS = 1000;
const IN_FLIGHT_FRESH_AT_LIMIT_MS = 200;

export class KeyLimits {
  private readonly buckets = new Map<string, Bucket>();
  private readonly inFlight = new Map<string, InFlight>();
  private readonly now: () => number;

  constructor(private readonly options: KeyLimitsOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Takes one request from the key's bucket; throws 429 when it is empty. `own`: the key's own quota (null: the default). */
  takeRequest(owner: string, own: number | null = null): void {
    if (this.tryTakeRequest(owner, own)) return;
    const quota = own ?? this.options.requestsPerMinute;
    const bucket = this.buckets.get(owner);
    const waitS = Math.max(1, Math.ceil((1 - (bucket?.tokens ?? 0)) / (quota / 60_000) / 1000));
    throw errors.rateLimited(`This API key sent more than ${quota} requests in a minute; retry after ${waitS} s.`, {
      'retry-after': String(waitS),
      'ratelimit-policy': `"requests";q=${quota};w=60`,
      ratelimit: `"requests";r=0;t=${waitS}`,
    });
  }

  /** Takes one request from the key's bucket if it has one; false (and nothing taken) when empty. */
  tryTakeRequest(owner: string, own: number | null = null): boolean {
    const quota = own ?? this.options.requestsPerMinute;
    if (quota <= 0) return true;
    const now = this.now();
    let bucket = this.buckets.get(owner);
    if (!bucket) {
      bucket = { tokens: quota, at: now };
      this.buckets.set(owner, bucket);
    } else {
      // A changed quota takes effect at once: the bucket never holds more than the current one.
      bucket.tokens = Math.min(quota, bucket.tokens + ((now - bucket.at) * quota) / 60_000);
      bucket.at = now;
    }
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Throws 429 when the key already has its limit of tasks queued or processing. `own`: the key's own limit (null: the default). */
  async admitTask(owner: string, own: number | null = null): Promise<void> {
    const limit = own ?? this.options.tasksInFlight;
    if (limit <= 0) return;
    const count = await this.inFlightCount(owner, limit);
    if (count < limit) return;
    throw tasksRefused(limit);
  }

  /**
   * Whether admitTask and admitInputBytes could refuse a create of this key (`own`: its own
   * in-flight limit): false when both limits are off, so a create skips them, and the count of
   * its data-URL bytes, without a promise.
   */
  admitsAll(own: number | null = null): boolean {
    return (own ?? this.options.tasksInFlight) <= 0 && ((this.options.inputBytesPerKey ?? 0) <= 0 || this.options.activeInputBytes === undefined);
  }

  /** The in-flight limit a create's insert guards when the key has none of its own (0: none). */
  get inFlightDefault(): number {
    return this.options.tasksInFlight;
  }

  /**
   * Throws when storing `incoming` more bytes of inputs would take the key past its limit:
   * 413 when this request alone is over it (it can never be accepted), else 429 until some
   * of the key's tasks end (their inputs are deleted then). A pre-check on the key's counter
   * (one row), before the inputs are written to disk: the insert's reservation, in the task's
   * own transaction, is what decides (creates at the same instant cannot pass it together).
   */
  async admitInputBytes(owner: string, incoming: number): Promise<void> {
    const limit = this.options.inputBytesPerKey ?? 0;
    if (limit <= 0 || incoming <= 0 || this.options.activeInputBytes === undefined) return;
    if (incoming > limit) throw errors.inputBytesOverLimit(incoming, limit);
    const active = await this.options.activeInputBytes(owner);
    if (active + incoming > limit) throw inputBytesRefused(active, incoming, limit);
  }

  /** Records a creation, so the cached count stays close between refreshes. */
  taskCreated(owner: string): void {
    const entry = this.inFlight.get(owner);
    if (entry) entry.count += 1;
  }

  private async inFlightCount(owner: string, limit: number): Promise<number> {
    const now = this.now();
    let entry = this.inFlight.get(owner);
    if (entry) {
      const freshFor = entry.count >= limit ? IN_FLIGHT_FRESH_AT_LIMIT_MS : IN_FLIGHT_FRESH_MS;
      if (now - entry.at < freshFor) return entry.count;
    } else {
      entry = { count: 0, at: 0, pending: undefined };
      this.inFlight.set(owner, entry);
    }
    // One store query per key at a time, however many requests are waiting on it.
    const current = entry;
    current.pending ??= this.options.countActive(owner, limit).then(
      (count) => {
        current.count = count;
        current.at = this.now();
        current.pending = undefined;
        return count;
      },
      (error: unknown) => {
        current.pending = undefined;
        throw error;
      },
    );
    return current.pending;
  }
}

/** The 429 of a create whose `incoming` input bytes do not fit beside the `active` ones under `limit`. */
export function inputBytesRefused(active: number, incoming: number, limit: number): Error {
  const waitS = 2;
  return errors.rateLimited(
    `This API key's queued and processing tasks hold ${active} bytes of inputs; ${incoming} more would pass its limit of ${limit} bytes. Retry when some have finished.`,
    { 'retry-after': String(waitS), 'ratelimit-policy': `"input-bytes";q=${limit}`, ratelimit: `"input-bytes";r=${Math.max(0, limit - active)};t=${waitS}` },
  );
}

/** The 429 of a create refused because the key has `limit` tasks queued or processing. */
export function tasksRefused(limit: number): Error {
  const waitS = 2;
  return errors.rateLimited(`This API key has ${limit} tasks queued or processing, its limit; retry when some have finished.`, {
    'retry-after': String(waitS),
    'ratelimit-policy': `"tasks";q=${limit}`,
    ratelimit: `"tasks";r=0;t=${waitS}`,
  });
}

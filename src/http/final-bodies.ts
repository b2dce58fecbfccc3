import type { Task } from '../store/records.js';
import type { Family } from '../wire/envelopes.js';

/** What the cache of final task bodies is told at start (config: MEDIAGATE_FINAL_BODY_CACHE_BYTES). */
export interface FinalBodyCacheOptions {
  /** The most bytes of bodies held (least recently used go first); 0 turns the cache off. */
  readonly maxBytes: number;
  /** MEDIAGATE_TASK_RETENTION_S in ms: a final task is deleted that long after it ended. */
  readonly retentionMs: number;
  /** The URL signer's generation (storage/signing.ts): it changes when the secret does. */
  readonly generation: () => number;
  readonly now?: () => number;
}

interface Entry {
  readonly owner: string;
  readonly family: Family;
  readonly bytes: Buffer;
  /** Served until then: before any process's retention may delete the task. */
  readonly until: number;
  readonly size: number;
}

/** Completed, failed or cancelled: nothing of its body changes again. */
export function isFinal(task: Task): boolean {
  return task.status !== 'queued' && task.status !== 'processing' && task.completedAt !== null;
}

/** Map and entry bookkeeping per entry, on top of the body and the two strings. */
const ENTRY_OVERHEAD = 160;
/**
 * How long before the task's retention ends a cached body stops being served: the processes
 * sharing a PostgreSQL database delete by their own clocks, which may differ by this much.
 */
const MAX_CLOCK_SKEW_MS = 60_000;

/**
 * The serialized status bodies of final tasks. A final task never changes (no statement updates
 * a field of its body once it is completed, failed or cancelled), and clients poll finished tasks
 * again and again: its answer is serialized once and served from these bytes, without a read of
 * the store. Two things end a body's life, and both are checked on every hit, so the bytes are
 * always what a fresh read would answer:
 * - the signing secret's rotation (its output URLs carry the secret's signature): the first
 *   request after this process picks up the new secret (`startSigningRefresh`, every process on
 *   its own timer, as the URLs a fresh read would sign) drops every entry;
 * - retention: the task is deleted `retentionMs` after it ended, by whichever process sweeps
 *   first, so an entry is served only until shortly before then (the margin covers the clocks
 *   of processes sharing a database). A URL's own expiry needs nothing: a poll answers the same
 *   URL after it expired as before (its `exp` derives from the completion time), cached or not.
 * Entries are per process; bounded by `maxBytes`, least recently used first out.
 */
export class FinalBodies {
  private readonly entries = new Map<string, Entry>();
  private held = 0;
  private generation: number;
  private readonly now: () => number;
  private readonly margin: number;

  constructor(private readonly options: FinalBodyCacheOptions) {
    this.generation = options.generation();
    this.now = options.now ?? Date.now;
    this.margin = Math.min(MAX_CLOCK_SKEW_MS, Math.floor(options.retentionMs / 10));
  }

  /** The cached body of `owner`'s task `id` of `family`, if held and still valid. */
  get(owner: string, family: Family, id: string): Buffer | undefined {
    if (this.options.maxBytes === 0 || !this.current()) return undefined;
    const entry = this.entries.get(id);
    if (entry === undefined) return undefined;
    if (this.now() >= entry.until) {
      this.remove(id, entry);
      return undefined;
    }
    // Another key's task, or the other family's: a miss, and the read answers 404.
    if (entry.owner !== owner || entry.family !== family) return undefined;
    // Most recently used last: the Map's order is the eviction order.
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry.bytes;
  }

  /**
   * The bytes of `text`, the body of `task` just made from a read; kept when the task is final
   * and not too close to its deletion. Call it in the same turn as the body was made: the
   * signer's generation is then the one its URLs were signed with.
   */
  keep(task: Task, family: Family, text: string): Buffer {
    const bytes = Buffer.from(text);
    if (this.options.maxBytes === 0 || !isFinal(task)) return bytes;
    this.current();
    const until = (task.completedAt ?? 0) + this.options.retentionMs - this.margin;
    if (this.now() >= until) return bytes;
    const size = bytes.length + 2 * (task.id.length + task.owner.length) + ENTRY_OVERHEAD;
    if (size > this.options.maxBytes) return bytes;
    const previous = this.entries.get(task.id);
    if (previous !== undefined) this.remove(task.id, previous);
    this.entries.set(task.id, { owner: task.owner, family, bytes, until, size });
    this.held += size;
    for (const [id, entry] of this.entries) {
      if (this.held <= this.options.maxBytes) break;
      this.remove(id, entry);
    }
    return bytes;
  }

  /**
   * Drops the body of task `id`, if held: told of every changed task (the task feed), so a task
   * deleted by its owner (the front doors' DELETE, in any process) is never answered again.
   */
  forget(id: string): void {
    const entry = this.entries.get(id);
    if (entry !== undefined) this.remove(id, entry);
  }

  /** Bytes held, entries held (for the metrics and the specs). */
  get size(): { bytes: number; entries: number } {
    return { bytes: this.held, entries: this.entries.size };
  }

  /** False (and empty) when the signing secret changed since the entries were made. */
  private current(): boolean {
    const generation = this.options.generation();
    if (generation === this.generation) return true;
    this.entries.clear();
    this.held = 0;
    this.generation = generation;
    return false;
  }

  private remove(id: string, entry: Entry): void {
    this.entries.delete(id);
    this.held -= entry.size;
  }
}

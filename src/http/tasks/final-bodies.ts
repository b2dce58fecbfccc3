import type { Task } from '../../store/records.js';
import type { TaskFeed } from '../../tasks/feed.js';
import type { Family } from '../../wire/envelopes.js';

/** What the cache of final task bodies is told at start (config: MEDIAGATE_FINAL_BODY_CACHE_BYTES). */
export interface FinalBodyCacheOptions {
  /** The most bytes of bodies held (least recently used go first); 0 turns the cache off. */
  readonly maxBytes: number;
  /** MEDIAGATE_TASK_RETENTION_S in ms: a final task is deleted that long after it ended. */
  readonly retentionMs: number;
  /** The URL signer's generation (storage/signing.ts): it changes when the secret does. */
  readonly generation: () => number;
  /**
   * Whether this process hears every change of every task now (tasks/feed.ts `live`): bodies of
   * running tasks are kept and served only while it does. Absent: never (final bodies only).
   */
  readonly live?: () => boolean;
  readonly now?: () => number;
}

interface Entry {
  readonly owner: string;
  readonly family: Family;
  readonly bytes: Buffer;
  /** Served until then: before any process's retention may delete the task (a running task's: never ends by time). */
  readonly until: number;
  readonly size: number;
  /** A queued or processing task's body: dropped by the task's next change. */
  readonly running: boolean;
  /** Served since eviction last passed it (second chance: `keep`'s eviction). */
  used: boolean;
}

/** A read of a task the cache may keep the answer of; `stale` once the task changed meanwhile. */
export interface BodyRead {
  stale: boolean;
}

/** Completed, failed or cancelled: nothing of its body changes again. */
export function isFinal(task: Task): boolean {
  return task.status !== 'queued' && task.status !== 'processing' && task.completedAt !== null;
}

/**
 * Map and entry bookkeeping per entry, on top of the body and the two strings: measured with
 * 100,000 running bodies of 245 bytes (heap and buffers grew 773 bytes an entry), so that the
 * cap holds for the process's memory, not only for the bytes of the bodies.
 */
const ENTRY_OVERHEAD = 420;
/**
 * How long before the task's retention ends a cached body stops being served: the processes
 * sharing a PostgreSQL database delete by their own clocks, which may differ by this much.
 */
const MAX_CLOCK_SKEW_MS = 60_000;

/**
 * The serialized status bodies of tasks, final and running.
 *
 * Running tasks (queued, processing): a body is kept until the task's next change, which the
 * task feed tells every process (`changed`), and only while the feed is live: a change made
 * while it was not (a lost LISTEN connection) may have been missed, so every running body is
 * dropped when it stops and none is kept until it is back. A read that a change overtook (the
 * row was read before the change's commit, the answer arrives after its notification) is
 * answered but not kept: `beginRead` marks it, `changed` spoils it. So a running body is never
 * served later than the feed's own delay after the change that ended it (the time a
 * notification takes from the writer's commit to this process: the same process, at once; on
 * PostgreSQL, the delivery of a NOTIFY, milliseconds on a healthy connection).
 *
 * Final tasks: a final task never changes (no statement updates
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
 * Entries are per process; bounded by `maxBytes`, least recently used first out (approximately:
 * a second chance for an entry served since eviction last passed it, `keep`).
 */
export class FinalBodies {
  private readonly entries = new Map<string, Entry>();
  /** Reads of running tasks in flight, by task id: a change meanwhile spoils them. */
  private readonly reads = new Map<string, BodyRead>();
  private held = 0;
  private running = 0;
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
    // The feed stopped and its loss has not been heard yet: no running body can be trusted.
    if (entry.running && !(this.options.live?.() ?? false)) {
      this.changedAll();
      return undefined;
    }
    if (this.now() >= entry.until) {
      this.remove(id, entry);
      return undefined;
    }
    // Another key's task, or the other family's: a miss, and the read answers 404.
    if (entry.owner !== owner || entry.family !== family) return undefined;
    // Marked, not moved: moving the entry to the Map's end on every hit (a delete and a set)
    // cost a poll ~6x this, and left the Map's table to be rebuilt as it filled with holes.
    entry.used = true;
    return entry.bytes;
  }

  /**
   * A read of task `id` begins (a miss): its answer may be kept unless the task changes before
   * it arrives. End it with `keep` or `endRead`.
   */
  beginRead(id: string): BodyRead {
    const read: BodyRead = { stale: false };
    // A second read of the same task meanwhile: the first one's answer is not kept (harmless).
    const before = this.reads.get(id);
    if (before !== undefined) before.stale = true;
    this.reads.set(id, read);
    return read;
  }

  /** The read ended without an answer to keep (no such task, or the read failed). */
  endRead(id: string, read: BodyRead): void {
    if (this.reads.get(id) === read) this.reads.delete(id);
  }

  /**
   * Task `id` changed (the task feed): its body goes, and a read in flight is spoiled. A final
   * task changes only by its deletion (the front doors' DELETE, in any process: afterwards it is
   * never answered again; retention needs no notice, see `until`).
   */
  changed(id: string): void {
    const read = this.reads.get(id);
    if (read !== undefined) read.stale = true;
    const entry = this.entries.get(id);
    if (entry !== undefined) this.remove(id, entry);
  }

  /** Changes may have been missed (the feed stopped or came back): every running body goes. */
  changedAll(): void {
    for (const read of this.reads.values()) read.stale = true;
    if (this.running === 0) return;
    for (const [id, entry] of this.entries) if (entry.running) this.remove(id, entry);
  }

  /**
   * The bytes of `text`, the body of `task` just made from a read; kept when the task is final
   * and not too close to its deletion, or running, the feed live and `read` (begun before the
   * read) not overtaken by a change. Call it in the same turn as the body was made: the signer's
   * generation is then the one its URLs were signed with.
   */
  keep(task: Task, family: Family, text: string, read?: BodyRead): Buffer {
    if (read !== undefined) this.endRead(task.id, read);
    const bytes = Buffer.from(text);
    if (this.options.maxBytes === 0) return bytes;
    const final = isFinal(task);
    if (!final && (read === undefined || read.stale || !(this.options.live?.() ?? false))) return bytes;
    this.current();
    const until = final ? (task.completedAt ?? 0) + this.options.retentionMs - this.margin : Number.POSITIVE_INFINITY;
    if (this.now() >= until) return bytes;
    const size = bytes.length + 2 * (task.id.length + task.owner.length) + ENTRY_OVERHEAD;
    if (size > this.options.maxBytes) return bytes;
    const previous = this.entries.get(task.id);
    if (previous !== undefined) this.remove(task.id, previous);
    this.entries.set(task.id, { owner: task.owner, family, bytes, until, size, running: !final, used: false });
    this.held += size;
    if (!final) this.running += 1;
    // Oldest first; an entry served since the last pass gets a second chance at the end (the
    // Map visits it again there, unmarked). Each entry moves at most once a pass, and only for
    // a hit since: the eviction order approximates least recently used, with no work per hit.
    for (const [id, entry] of this.entries) {
      if (this.held <= this.options.maxBytes) break;
      if (entry.used) {
        entry.used = false;
        this.entries.delete(id);
        this.entries.set(id, entry);
      } else this.remove(id, entry);
    }
    return bytes;
  }

  /** Bytes held, entries held, of which running; reads in flight (for the metrics and the specs). */
  get size(): { bytes: number; entries: number; running: number; reads: number } {
    return { bytes: this.held, entries: this.entries.size, running: this.running, reads: this.reads.size };
  }

  /** False (and empty) when the signing secret changed since the entries were made. */
  private current(): boolean {
    const generation = this.options.generation();
    if (generation === this.generation) return true;
    this.entries.clear();
    this.held = 0;
    this.running = 0;
    this.generation = generation;
    return false;
  }

  private remove(id: string, entry: Entry): void {
    this.entries.delete(id);
    this.held -= entry.size;
    if (entry.running) this.running -= 1;
  }
}

/** This process's task changes, as its TaskService tells them (`changed`, with the task's id). */
export interface OwnChanges {
  on(event: 'changed', listener: (change: { id: string }) => void): unknown;
  off(event: 'changed', listener: (change: { id: string }) => void): unknown;
}

/**
 * Drops the bodies of changed tasks: every change the feed hears, whichever process made it
 * (null: changes may have been missed), and this process's own changes from its service, in the
 * step that made them. On PostgreSQL the feed hears this process's changes too, but a NOTIFY's
 * round trip later: a DELETE answered here would leave the task's body here for that long, and a
 * poll sent on the DELETE's answer could be served it. A change heard twice drops nothing twice.
 * Returns the unwatch.
 */
export function watchChanges(bodies: Pick<FinalBodies, 'changed' | 'changedAll'>, feed: Pick<TaskFeed, 'watchAll'>, service: OwnChanges): () => void {
  const unwatchFeed = feed.watchAll((id) => (id === null ? bodies.changedAll() : bodies.changed(id)));
  const own = ({ id }: { id: string }): void => bodies.changed(id);
  service.on('changed', own);
  return () => {
    unwatchFeed();
    service.off('changed', own);
  };
}

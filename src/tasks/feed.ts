import pg from 'pg';
import type { TaskService } from './service.js';
import { KEY_CHANNEL, TASK_CHANNEL } from '../store/migrations.js';
import type { TaskStore } from '../store/store.js';
import type { Task } from '../store/records.js';

export type TaskListener = (task: Task) => void;

/**
 * The changes of tasks, whichever process makes them: a listener gets the task as it is after
 * each change (re-read from the store, so several changes in a burst may arrive as one).
 * SQLite (one process): TaskService's `changed` event. PostgreSQL: every transition's
 * `pg_notify` (migration 4), heard on one LISTEN connection per process.
 */
export interface TaskFeed {
  /** Listens to one task of `owner`; returns the unsubscribe. */
  subscribe(owner: string, id: string, listener: TaskListener): () => void;
  /**
   * Hears the id of every changed task, whichever process changed it (no re-read: the caller
   * filters and reads what concerns it), and null when changes may have been missed (the
   * LISTEN connection came back); returns the unsubscribe.
   */
  watchAll(listener: (id: string | null) => void): () => void;
  /**
   * Hears that some API key was changed by another process (disabled, revoked, its settings),
   * or that such a change may have been missed (the LISTEN connection came back): the key
   * cache drops what it holds. Never called on SQLite, which has no notifications (the cache's
   * 5 s stand there); returns the unsubscribe.
   */
  watchKeys(listener: () => void): () => void;
  /**
   * Whether every change of every task is being heard now. False while a PostgreSQL feed has
   * lost its LISTEN connection; a watcher hears null when it stops being live and again when it
   * is back. What caches task state (the poll bodies of running tasks) serves it only while live.
   */
  readonly live: boolean;
  /** Tasks with at least one listener (a closed stream must leave none behind). */
  readonly subscribed: number;
  close(): Promise<void>;
}

export interface FeedLog {
  warn(object: object, message: string): void;
}

interface Subscription {
  readonly owner: string;
  readonly listeners: Set<TaskListener>;
  reading: boolean;
  again: boolean;
}

/** The subscribed tasks, and the re-read of one on a signal (coalesced: one read in flight per task). */
class Subscriptions {
  private readonly subs = new Map<string, Subscription>();

  constructor(
    private readonly store: Pick<TaskStore, 'getTask'>,
    private readonly log: FeedLog,
  ) {}

  subscribe(owner: string, id: string, listener: TaskListener): () => void {
    let sub = this.subs.get(id);
    if (sub === undefined) {
      sub = { owner, listeners: new Set(), reading: false, again: false };
      this.subs.set(id, sub);
    }
    // Two keys cannot share a task id, but a listener must never see another key's task.
    if (sub.owner !== owner) return () => undefined;
    const listeners = sub.listeners;
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.subs.get(id)?.listeners === listeners) this.subs.delete(id);
    };
  }

  get size(): number {
    return this.subs.size;
  }

  signal(id: string): void {
    const sub = this.subs.get(id);
    if (sub === undefined) return;
    if (sub.reading) {
      sub.again = true;
      return;
    }
    sub.reading = true;
    void this.reread(id, sub);
  }

  signalAll(): void {
    for (const id of this.subs.keys()) this.signal(id);
  }

  private async reread(id: string, sub: Subscription): Promise<void> {
    do {
      sub.again = false;
      let task: Task | undefined;
      try {
        task = await this.store.getTask(id, sub.owner);
      } catch (error) {
        this.log.warn({ err: error, task_id: id }, 'the task feed could not read a changed task');
      }
      if (task !== undefined) {
        for (const listener of [...sub.listeners]) listener(task);
      }
    } while (sub.again && sub.listeners.size > 0);
    sub.reading = false;
  }
}

/** How often a SQLite feed looks for commits of other processes on the file (ms). */
export const FOREIGN_COMMIT_CHECK_MS = 100;

/**
 * SQLite: the service's own events are this process's changes. Another process on the same file
 * (a `mediagate worker` beside `serve --no-workers`, the CLI) tells nothing, so `dataVersion`
 * (SQLite's data_version, which moves only for other connections' commits) is read every
 * FOREIGN_COMMIT_CHECK_MS: when it moved, changes may have been missed, and the watchers hear
 * null and the subscribed tasks are read again. That interval bounds how late such a change is
 * heard; this process's own changes are heard at once.
 */
export function serviceFeed(service: TaskService, store: Pick<TaskStore, 'getTask'>, log: FeedLog, dataVersion?: () => number): TaskFeed {
  const subs = new Subscriptions(store, log);
  const onChanged = ({ id }: { id: string }): void => subs.signal(id);
  service.on('changed', onChanged);
  const watchers = new Set<(id: string | null) => void>();
  const onWatched = ({ id }: { id: string }): void => {
    for (const watcher of watchers) watcher(id);
  };
  service.on('changed', onWatched);
  let timer: NodeJS.Timeout | undefined;
  if (dataVersion !== undefined) {
    let seen = dataVersion();
    const check = (): void => {
      try {
        const now = dataVersion();
        if (now !== seen) {
          seen = now;
          for (const watcher of watchers) watcher(null);
          subs.signalAll();
        }
      } catch (error) {
        log.warn({ err: error }, 'the task feed could not read the SQLite data version');
      }
      timer = setTimeout(check, FOREIGN_COMMIT_CHECK_MS).unref();
    };
    timer = setTimeout(check, FOREIGN_COMMIT_CHECK_MS).unref();
  }
  return {
    subscribe: (owner, id, listener) => subs.subscribe(owner, id, listener),
    watchAll: (listener) => {
      watchers.add(listener);
      return () => watchers.delete(listener);
    },
    watchKeys: () => () => undefined,
    live: true,
    get subscribed() {
      return subs.size;
    },
    close() {
      clearTimeout(timer);
      service.off('changed', onChanged);
      service.off('changed', onWatched);
      return Promise.resolve();
    },
  };
}

export interface PostgresFeedOptions {
  readonly connectionString: string;
  readonly store: Pick<TaskStore, 'getTask'>;
  readonly log: FeedLog;
  /** First reconnection delay; doubles up to 5 s. Default 100 ms. */
  readonly reconnectMs?: number;
}

export type PostgresFeed = TaskFeed & {
  /** Resolves once the LISTEN connection is up (again). */
  ready(): Promise<void>;
  /** The current LISTEN connection's backend pid (tests end it to exercise the reconnect). */
  readonly listenerPid: number | undefined;
};

/**
 * PostgreSQL: one dedicated connection per process LISTENs on the task and key channels. A lost
 * connection is reopened with backoff; every (re)connect re-reads the subscribed tasks, so a
 * change notified while nobody listened is not missed.
 */
export function postgresFeed(options: PostgresFeedOptions): PostgresFeed {
  const subs = new Subscriptions(options.store, options.log);
  const firstDelay = options.reconnectMs ?? 100;
  let delay = firstDelay;
  let closed = false;
  let current: pg.Client | undefined;
  let pid: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let waiters: (() => void)[] = [];
  const watchers = new Set<(id: string | null) => void>();
  const watched = (id: string | null): void => {
    for (const watcher of watchers) watcher(id);
  };
  const keyWatchers = new Set<() => void>();
  const keysChanged = (): void => {
    for (const watcher of keyWatchers) watcher();
  };

  const connect = async (): Promise<void> => {
    timer = undefined;
    const client = new pg.Client({ connectionString: options.connectionString, application_name: 'mediagate-feed' });
    let dead = false;
    const lost = (error?: unknown): void => {
      if (dead) return;
      dead = true;
      if (current === client) {
        current = undefined;
        pid = undefined;
        // No longer live: what was learnt from the feed may go stale from now on.
        watched(null);
      }
      void client.end().catch(() => undefined);
      if (closed) return;
      if (error !== undefined) options.log.warn({ err: error }, 'the task feed lost its PostgreSQL connection; reconnecting');
      timer = setTimeout(() => void connect(), delay);
      delay = Math.min(delay * 2, 5000);
    };
    client.on('error', (error) => lost(error));
    client.on('end', () => lost());
    client.on('notification', (message) => {
      if (message.channel === KEY_CHANNEL) {
        keysChanged();
        return;
      }
      if (message.channel !== TASK_CHANNEL || !message.payload) return;
      subs.signal(message.payload);
      watched(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${TASK_CHANNEL}; LISTEN ${KEY_CHANNEL}`);
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      if (dead) return;
      if (closed) {
        lost();
        return;
      }
      current = client;
      pid = rows[0]?.pid;
      delay = firstDelay;
      subs.signalAll();
      watched(null);
      keysChanged();
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
    } catch (error) {
      lost(error);
    }
  };
  void connect();

  return {
    subscribe: (owner, id, listener) => subs.subscribe(owner, id, listener),
    watchAll: (listener) => {
      watchers.add(listener);
      return () => watchers.delete(listener);
    },
    watchKeys: (listener) => {
      keyWatchers.add(listener);
      return () => keyWatchers.delete(listener);
    },
    ready: () => (current !== undefined ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    get live() {
      return current !== undefined;
    },
    get subscribed() {
      return subs.size;
    },
    get listenerPid() {
      return pid;
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      const client = current;
      current = undefined;
      for (const wake of waiters) wake();
      waiters = [];
      await client?.end().catch(() => undefined);
    },
  };
}

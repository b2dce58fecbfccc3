/**
 * Group commit: writes that arrive in the same turn of the event loop are written together
 * by one `writeAll` (one transaction), and each caller's promise settles only after it, so a
 * write is as durable when its promise resolves as if it had its own transaction. On SQLite
 * the commit (a WAL append of every page touched), not the row, is what costs.
 *
 * If the batch fails, each write is tried alone, so one bad write fails only its own caller.
 *
 * For a synchronous writer (better-sqlite3): a batch is what one turn brings. PostgreSQL, where
 * a write is a round trip, uses PipelinedGroupCommit (postgres-store.ts) instead: one batch in
 * flight, and the next gathers while it runs.
 */
export class GroupCommit<T, R> {
  private pending: { item: T; resolve: (result: R) => void; reject: (error: unknown) => void }[] = [];

  constructor(private readonly writeAll: (items: readonly T[]) => Promise<readonly R[]> | readonly R[]) {}

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    let results: readonly R[];
    try {
      results = await this.writeAll(batch.map((entry) => entry.item));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.reject(error);
        return;
      }
      for (const entry of batch) {
        try {
          const [result] = await this.writeAll([entry.item]);
          entry.resolve(result as R);
        } catch (alone) {
          entry.reject(alone);
        }
      }
      return;
    }
    batch.forEach((entry, i) => entry.resolve(results[i] as R));
  }
}

/** Calls one statement carries at most, so that a backlog does not become one huge statement. */
const MAX_BATCH = 1000;

/**
 * Group commit: calls are run in batches, one batch in flight at a time, and each caller is
 * answered only after its batch has run, so a write is as durable when its promise resolves as
 * if it had its own transaction. A call made while none is in flight runs at the end of the
 * current turn of the event loop (no added wait when idle); calls made while one is in flight
 * wait for it and go together in the next. So the batch size follows the load: on PostgreSQL
 * one commit carries everything that arrived during the previous round trip, instead of many
 * small commits queueing for the server's WAL flush; on SQLite, where a commit is synchronous
 * and nothing arrives while one runs, a batch is what one turn of the event loop brought. The
 * commit (a WAL append of every page touched, or a round trip), not the row, is what costs.
 *
 * `run` returns one result per input, in order. If it throws and `isolate(error)` says so, each
 * input of the batch is run again alone, so that one bad row fails only its own call; otherwise
 * every call of the batch fails with the error, as its own statement would have.
 */
export class GroupCommit<In, Out> {
  private pending: Entry<In, Out>[] = [];
  private scheduled = false;
  private inFlight = false;

  constructor(
    private readonly run: (inputs: readonly In[]) => Promise<Out[]>,
    private readonly isolate: (error: unknown) => boolean,
  ) {}

  add(input: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight || this.pending.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending.splice(0, MAX_BATCH);
    this.inFlight = true;
    try {
      settle(batch, await this.run(batch.map((entry) => entry.input)));
    } catch (error) {
      if (batch.length === 1 || !this.isolate(error)) for (const entry of batch) entry.reject(error);
      else {
        await Promise.all(
          batch.map((entry) =>
            this.run([entry.input]).then(
              (outs) => settle([entry], outs),
              (alone: unknown) => entry.reject(alone),
            ),
          ),
        );
      }
    } finally {
      this.inFlight = false;
      this.schedule();
    }
  }
}

interface Entry<In, Out> {
  readonly input: In;
  resolve(out: Out): void;
  reject(error: unknown): void;
}

function settle<Out>(entries: readonly Entry<unknown, Out>[], outs: readonly Out[]): void {
  entries.forEach((entry, i) => {
    if (i < outs.length) entry.resolve(outs[i] as Out);
    else entry.reject(new Error('a batch returned fewer results than it was given'));
  });
}

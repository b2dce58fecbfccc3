/**
 * Per-channel pacing inside one process: a token bucket per rate (submit_per_s, poll_per_s).
 * `reserve` never refuses: it books the next free token and says how long to wait for it, so
 * calls leave at the configured rate however many steps ask at once. Across processes
 * (PostgreSQL) each process paces itself: the rates then add up (see docs/channels.md).
 */
export class TokenBucket {
  private nextFreeAt = 0;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number,
  ) {}

  /** Milliseconds to wait before using the token just booked. */
  reserve(): number {
    const now = this.now();
    const at = Math.max(now, this.nextFreeAt);
    this.nextFreeAt = at + 1000 / this.perSecond;
    return at - now;
  }
}

/** One lock per channel: the max_in_flight check and the `submitting` write happen under it. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    let release = (): void => {};
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before.then(() => mine);
    this.tails.set(key, tail);
    await before;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

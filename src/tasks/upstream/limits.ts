/*
 * Request pacing (submit_per_s, poll_per_s) is shared through the database
 * (TaskService.bookChannelSlot, channel_limits); what stays in the process is the channel's lock
 * and the slots booked by tasks put back until their time.
 */

/** One lock per channel: the slot check (max_in_flight, the key's share) and the `submitting` write happen under it. */
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

export type RateBucket = 'submit' | 'poll';

/** Books the next slot of a channel's bucket; resolves with when it starts (ms). */
export type BookSlot = (channel: string, bucket: RateBucket, perSecond: number) => Promise<number>;

/**
 * Request slots booked by steps that could not use them yet (docs/channels.md "Limits"). A step
 * never waits for a rate: when its slot starts later than now, the caller puts the task back
 * until then and the step ends, so a slow rate holds none of the scheduler's step slots. The
 * booking is kept here, by task, so that the next claim of the task spends it rather than
 * booking another at the end of the queue.
 *
 * Only that claim: a booking is spent by the claim whose fence (`claim`) is the one the put-back
 * expected, and dropped otherwise: another process claimed the task in between (and booked its
 * own slot), or the task came back to something else (no `max_in_flight` slot) and was put back
 * for that. A slot spent later than it started would go out together with the slots booked
 * after it, over the rate. A booking the task never comes back for (it was cancelled, or
 * settled elsewhere) is forgotten after `keepMs`, and never spent later. A slot left unused only
 * slows the channel.
 */
export class RateSlots {
  private readonly booked = new Map<string, { readonly at: number; readonly claim: number }>();
  private prunedAt: number;

  constructor(
    private readonly book: BookSlot,
    private readonly now: () => number,
    private readonly keepMs: number,
  ) {
    this.prunedAt = now();
  }

  /**
   * Undefined when the task may send its request now (a slot is spent); otherwise when its
   * booked slot starts, the time to put the task back to. `claim` is the fence of the claim that
   * runs this step, and the one the next claim will hold if nothing else touched the task.
   */
  async take(id: string, channel: string, bucket: RateBucket, perSecond: number, claim: { now: number; next: number }): Promise<number | undefined> {
    this.prune();
    const booking = key(id, channel, bucket);
    const kept = this.booked.get(booking);
    this.booked.delete(booking);
    const valid = kept !== undefined && kept.claim === claim.now && kept.at >= this.now() - this.keepMs;
    const at = valid ? kept.at : await this.book(channel, bucket, perSecond);
    if (at <= this.now()) return undefined;
    this.booked.set(booking, { at, claim: claim.next });
    return at;
  }

  private prune(): void {
    const now = this.now();
    if (now - this.prunedAt < this.keepMs) return;
    this.prunedAt = now;
    for (const [booking, { at }] of this.booked) if (at < now - this.keepMs) this.booked.delete(booking);
  }
}

const key = (id: string, channel: string, bucket: RateBucket): string => `${bucket}\u0000${channel}\u0000${id}`;

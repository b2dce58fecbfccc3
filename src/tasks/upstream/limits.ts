/*
 * Request pacing (submit_per_s, poll_per_s) is shared through the database
 * (TaskService.waitForChannelSlot, channel_limits); what stays in the process is this lock.
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

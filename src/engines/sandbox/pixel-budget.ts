/**
 * A process-wide budget of decoded pixels (a weighted semaphore). A few kilobytes of PNG can
 * declare 7000x7000 pixels, and an interlaced or 16-bit one is decoded whole: hundreds of MB per
 * image. A per-image limit does not bound the sum when several renders decode at once, and an
 * out-of-memory kill costs an attempt of every task rendering at that moment; so every decode
 * of a user image first takes its pixel count (read from the header, before any decode) from
 * this budget and gives it back once its decoded buffers are gone.
 *
 * An image larger than the whole budget still decodes, alone: it waits until nothing else holds
 * pixels, and nothing else starts while it runs. Waiters are served in order (no overtaking), so
 * a large image is not starved by a stream of small ones.
 */

interface Waiter {
  readonly pixels: number;
  readonly grant: () => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

export class PixelBudget {
  private held = 0;
  private readonly waiting: Waiter[] = [];

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError('the decode pixel budget must be a positive integer');
  }

  /** Pixels held by decodes running now. */
  get inUse(): number {
    return this.held;
  }

  /**
   * Waits for `pixels` (clamped to the capacity: a larger image runs alone) and returns the
   * function that gives them back (idempotent). Rejects with the signal's reason if it aborts
   * while waiting.
   */
  async acquire(pixels: number, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    const weight = Math.min(this.capacity, Math.max(1, Math.ceil(pixels)));
    if (this.waiting.length === 0 && this.held + weight <= this.capacity) return this.take(weight);
    // Null: the signal aborted while waiting; its reason is thrown below, as given.
    const granted = await new Promise<(() => void) | null>((resolve) => {
      const waiter: Waiter = {
        pixels: weight,
        signal,
        grant: () => resolve(this.take(weight)),
        onAbort: () => {
          const index = this.waiting.indexOf(waiter);
          if (index >= 0) this.waiting.splice(index, 1);
          resolve(null);
          // The head may have been the one blocking those behind it.
          this.serve();
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiting.push(waiter);
    });
    if (granted !== null) return granted;
    signal?.throwIfAborted();
    throw new Error('the decode budget wait ended without a grant');
  }

  /** Runs `decode` holding `pixels` of the budget. */
  async with<T>(pixels: number, signal: AbortSignal | undefined, decode: () => Promise<T>): Promise<T> {
    const release = await this.acquire(pixels, signal);
    try {
      return await decode();
    } finally {
      release();
    }
  }

  private take(weight: number): () => void {
    this.held += weight;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held -= weight;
      this.serve();
    };
  }

  private serve(): void {
    for (;;) {
      const head = this.waiting[0];
      if (head === undefined || this.held + head.pixels > this.capacity) return;
      this.waiting.shift();
      head.signal?.removeEventListener('abort', head.onAbort);
      head.grant();
    }
  }
}

/**
 * The one background loop of the process. Every periodic job (sweeps, reaps, heartbeats, claim
 * polls, key checks, keep-alives) runs on it, so that each gets the same answers to the same
 * questions: a turn never overlaps the previous one; a wake-up during a turn runs one more turn
 * right after it instead of being lost; a failed turn is reported, never thrown, and the loop
 * goes on; its timer never holds the process open; and a stop awaits the turn that runs, so
 * that what the turn uses (a store, a connection) can be closed after it.
 */

export interface LoopOptions {
  /** Names the loop in the reports of its failed turns. */
  readonly name: string;
  /**
   * One turn of work. A number it returns (or resolves to) is the delay, in ms, before the next
   * turn (a due time the turn knows, e.g. the next retry); otherwise the next turn comes
   * `intervalMs` after this one started, or at once when this one ran longer.
   */
  readonly turn: () => unknown;
  readonly intervalMs: number;
  /** Whether start() runs a turn at once (the default) or first waits `intervalMs`. */
  readonly immediate?: boolean;
  /** A turn that threw or rejected. */
  readonly onError: (error: unknown, name: string) => void;
}

type State = 'idle' | 'started' | 'stopped';

export class Loop {
  private state: State = 'idle';
  private timer: NodeJS.Timeout | undefined;
  /** The turns (and the ones woken during them) running now. */
  private running: Promise<void> | undefined;
  /** Set before a turn's synchronous part runs, which may wake the loop itself. */
  private busy = false;
  private again = false;
  private started = 0;
  private ended = 0;
  private readonly waiters = new Set<{ readonly turn: number; readonly resolve: () => void }>();
  private readonly turnListeners = new Set<(turn: number) => void>();

  constructor(private readonly options: LoopOptions) {}

  get name(): string {
    return this.options.name;
  }

  /** Turns ended since the loop was made (failed ones included). */
  get turns(): number {
    return this.ended;
  }

  get active(): boolean {
    return this.state === 'started';
  }

  /** Starts the loop (again, after a stop); a started loop is left as it is. */
  start(): this {
    if (this.state === 'started') return this;
    this.state = 'started';
    if (this.options.immediate ?? true) this.notify();
    else this.schedule(this.options.intervalMs);
    return this;
  }

  /** Runs a turn now, or, during a turn, once more right after it. Nothing while not started. */
  notify(): void {
    if (this.state !== 'started') return;
    this.again = true;
    if (this.busy) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.busy = true;
    this.running = this.runTurns();
  }

  /**
   * Wakes the loop and resolves when a turn that began after this call has ended: what a caller
   * that changed something the turn reads awaits. Resolves at once on a loop not started.
   */
  run(): Promise<void> {
    if (this.state !== 'started') return Promise.resolve();
    const turn = this.started + 1;
    const done = this.after(turn);
    this.notify();
    return done;
  }

  /**
   * Wakes the loop and resolves when it has no turn running or asked for: the turns woken while
   * these run are awaited too (a check that must cover every change heard while it ran).
   */
  drain(): Promise<void> {
    this.notify();
    return this.running ?? Promise.resolve();
  }

  /** Resolves when turn number `turn` (counted from 1) has ended, or the loop stopped. */
  after(turn: number): Promise<void> {
    if (this.ended >= turn || this.state === 'stopped') return Promise.resolve();
    return new Promise((resolve) => this.waiters.add({ turn, resolve }));
  }

  /** Resolves when the next turn to end has ended (tests: a loop's work observed, not slept on). */
  nextTurn(): Promise<void> {
    return this.after(this.ended + 1);
  }

  /** Calls `listener` after every turn with its number; returns the unsubscribe. */
  onTurn(listener: (turn: number) => void): () => void {
    this.turnListeners.add(listener);
    return () => this.turnListeners.delete(listener);
  }

  /** No more turns; resolves when the turn that runs, if any, has ended. */
  async stop(): Promise<void> {
    if (this.state === 'started') this.state = 'stopped';
    clearTimeout(this.timer);
    this.timer = undefined;
    this.again = false;
    await this.running;
    for (const waiter of this.waiters) waiter.resolve();
    this.waiters.clear();
  }

  private async runTurns(): Promise<void> {
    let delay = this.options.intervalMs;
    try {
      while (this.again && this.state === 'started') {
        this.again = false;
        delay = await this.turnOnce();
      }
    } finally {
      this.busy = false;
      this.running = undefined;
    }
    if (this.state === 'started') this.schedule(delay);
  }

  /** One turn; returns the delay before the next. */
  private async turnOnce(): Promise<number> {
    const turn = (this.started += 1);
    const began = Date.now();
    let due: number | undefined;
    try {
      const result = await this.options.turn();
      if (typeof result === 'number' && Number.isFinite(result)) due = result;
    } catch (error) {
      try {
        this.options.onError(error, this.options.name);
      } catch {
        // A failing reporter must not end the loop.
      }
    }
    this.ended = turn;
    for (const waiter of [...this.waiters]) {
      if (waiter.turn > turn) continue;
      this.waiters.delete(waiter);
      waiter.resolve();
    }
    for (const listener of [...this.turnListeners]) listener(turn);
    return due ?? this.options.intervalMs - (Date.now() - began);
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.notify();
      },
      Math.max(0, delayMs),
    );
    this.timer.unref();
  }
}

import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';

describe('eventually', () => {
  it('resolves with the first value that is neither undefined nor false', async () => {
    let calls = 0;
    const value = await eventually(() => (++calls >= 3 ? `call ${calls}` : undefined), { interval: 1 });
    expect(value).toBe('call 3');
  });

  it('treats a throwing condition as not yet, and names it and its last error at the deadline', async () => {
    const failing = eventually(
      () => {
        throw new Error('still 1 row');
      },
      { deadline: 30, interval: 5, what: 'no rows' },
    );
    await expect(failing).rejects.toThrow(/timed out after 30 ms waiting for no rows: last error: still 1 row/);
  });

  it('checks again at once when the wake event fires, not on the next interval', async () => {
    const emitter = new EventEmitter();
    let ready = false;
    const started = Date.now();
    const waiting = eventually(() => ready, { interval: 60_000, deadline: 60_000, wake: { emitter } });
    ready = true;
    emitter.emit('change');
    await expect(waiting).resolves.toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(emitter.listenerCount('change')).toBe(0);
  });
});

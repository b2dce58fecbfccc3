import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Loop } from '../src/loop.js';

/** A promise and its resolver, for turns the spec holds open. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const LONG = 60_000;
const run = promisify(execFile);

describe('Loop', () => {
  it('runs a turn at start, and none while not started or after stop', async () => {
    let turns = 0;
    const loop = new Loop({ name: 'count', intervalMs: LONG, onError: () => undefined, turn: () => (turns += 1) });
    loop.notify();
    expect(await loop.run().then(() => turns)).toBe(0);
    loop.start();
    await loop.after(1);
    expect(turns).toBe(1);
    await loop.stop();
    loop.notify();
    await loop.run();
    expect(turns).toBe(1);
    expect(loop.turns).toBe(1);
  });

  it('waits the interval first when not immediate, then turns every interval', async () => {
    const began = Date.now();
    const loop = new Loop({ name: 'later', intervalMs: 30, immediate: false, onError: () => undefined, turn: () => undefined }).start();
    await loop.after(3);
    expect(Date.now() - began).toBeGreaterThanOrEqual(80);
    await loop.stop();
  });

  it('never overlaps turns: a wake-up during a turn runs exactly one more turn after it', async () => {
    const held = gate();
    let concurrent = 0;
    let most = 0;
    let turns = 0;
    const loop = new Loop({
      name: 'held',
      intervalMs: LONG,
      onError: () => undefined,
      turn: async () => {
        concurrent += 1;
        most = Math.max(most, concurrent);
        turns += 1;
        if (turns === 1) await held.promise;
        concurrent -= 1;
      },
    }).start();
    const woken = loop.run();
    loop.notify();
    loop.notify();
    held.open();
    await woken;
    expect(turns).toBe(2);
    expect(most).toBe(1);
    await loop.stop();
  });

  it('drain covers the turns woken while it runs', async () => {
    const held = gate();
    let turns = 0;
    const loop = new Loop({
      name: 'drained',
      intervalMs: LONG,
      onError: () => undefined,
      turn: async () => {
        turns += 1;
        if (turns === 1) await held.promise;
      },
    }).start();
    const drained = loop.drain().then(() => turns);
    loop.notify();
    held.open();
    expect(await drained).toBe(2);
    await loop.stop();
  });

  it('reports a failed turn and goes on', async () => {
    const errors: unknown[] = [];
    let turns = 0;
    const loop = new Loop({
      name: 'flaky',
      intervalMs: LONG,
      onError: (error, name) => errors.push([name, (error as Error).message]),
      turn: () => {
        turns += 1;
        if (turns === 1) throw new Error('first turn fails');
        return Promise.reject(new Error('second turn rejects'));
      },
    }).start();
    await loop.after(1);
    await loop.run();
    expect(errors).toEqual([
      ['flaky', 'first turn fails'],
      ['flaky', 'second turn rejects'],
    ]);
    await loop.stop();
  });

  it('takes the due time a turn returns over the interval', async () => {
    const delays = [20, LONG];
    const loop = new Loop({ name: 'due', intervalMs: LONG, onError: () => undefined, turn: () => delays.shift() }).start();
    await loop.after(2);
    expect(loop.turns).toBe(2);
    await loop.stop();
  });

  it('stop awaits the turn that runs', async () => {
    const held = gate();
    let ended = false;
    const loop = new Loop({
      name: 'drain',
      intervalMs: LONG,
      onError: () => undefined,
      turn: async () => {
        await held.promise;
        ended = true;
      },
    }).start();
    const stopped = loop.stop().then(() => ended);
    held.open();
    expect(await stopped).toBe(true);
  });

  it('tells listeners of each turn, and starts again after a stop', async () => {
    const seen: number[] = [];
    const loop = new Loop({ name: 'seen', intervalMs: LONG, onError: () => undefined, turn: () => undefined });
    const off = loop.onTurn((turn) => seen.push(turn));
    loop.start();
    await loop.after(1);
    await loop.stop();
    loop.start();
    await loop.after(2);
    off();
    await loop.run();
    expect(seen).toEqual([1, 2]);
    await loop.stop();
  });

  it('holds no process open: a started loop waiting a minute lets node exit', async () => {
    // A child process, since the spec's own process is held open by the runner anyway.
    const script = `import { Loop } from ${JSON.stringify(new URL('../src/loop.ts', import.meta.url).href)};
      new Loop({ name: 'idle', intervalMs: 60000, onError: () => undefined, turn: () => undefined }).start();`;
    const began = Date.now();
    const { stderr } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 10_000 });
    expect(stderr).toBe('');
    expect(Date.now() - began).toBeLessThan(10_000);
  });
});

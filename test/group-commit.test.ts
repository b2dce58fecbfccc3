import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../src/store/group-commit.js';

/** A batch function whose calls are recorded and finish when the test says so. */
function controlled(fail?: (items: readonly number[]) => boolean) {
  const calls: number[][] = [];
  const finish: (() => void)[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const run = async (items: readonly number[]): Promise<number[]> => {
    calls.push([...items]);
    running += 1;
    mostAtOnce = Math.max(mostAtOnce, running);
    await new Promise<void>((resolve) => finish.push(resolve));
    running -= 1;
    if (fail?.(items)) throw new Error('unlucky');
    return items.map((n) => n * 10);
  };
  const next = async (): Promise<void> => {
    while (finish.length === 0) await new Promise((resolve) => setImmediate(resolve));
    finish.shift()?.();
  };
  return { run, calls, next, mostAtOnce: () => mostAtOnce };
}

describe('group commit over a round trip (PostgreSQL)', () => {
  it('runs one batch at a time, and the calls made while one runs go together in the next', async () => {
    const batches = controlled();
    const group = new GroupCommit<number, number>(batches.run, () => false);
    const first = group.add(1);
    await batches.next();
    expect(await first).toBe(10);
    // A second batch in flight, and calls piling up behind it.
    const second = group.add(2);
    await new Promise((resolve) => setImmediate(resolve));
    const piled = [group.add(3), group.add(4), group.add(5)];
    await batches.next();
    await batches.next();
    expect(await second).toBe(20);
    expect(await Promise.all(piled)).toEqual([30, 40, 50]);
    expect(batches.calls).toEqual([[1], [2], [3, 4, 5]]);
    expect(batches.mostAtOnce()).toBe(1);
  });

  it('fails every call of a failed batch with its error when the error is not one to isolate', async () => {
    const batches = controlled(() => true);
    const group = new GroupCommit<number, number>(batches.run, () => false);
    const results = Promise.allSettled([group.add(1), group.add(2)]);
    await batches.next();
    expect((await results).map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(batches.calls).toEqual([[1, 2]]);
  });

  it('runs each input of a failed batch alone when the error is one to isolate, so only the bad one fails', async () => {
    const batches = controlled((items) => items.includes(13));
    const group = new GroupCommit<number, number>(batches.run, () => true);
    const results = Promise.allSettled([group.add(1), group.add(13), group.add(2)]);
    for (let i = 0; i < 4; i += 1) await batches.next();
    expect((await results).map((result) => (result.status === 'fulfilled' ? result.value : 'failed'))).toEqual([10, 'failed', 20]);
    expect(batches.calls).toEqual([[1, 13, 2], [1], [13], [2]]);
  });
});

describe('group commit with a synchronous writer (SQLite)', () => {
  it('writes what arrives in one turn of the event loop in one call, and answers each caller after it', async () => {
    const calls: number[][] = [];
    const group = new GroupCommit<number, number>(
      (items) => {
        calls.push([...items]);
        return Promise.resolve(items.map((n) => n * 10));
      },
      () => true,
    );
    const first = await Promise.all([group.add(1), group.add(2), group.add(3)]);
    const second = await group.add(4);
    expect(first).toEqual([10, 20, 30]);
    expect(second).toBe(40);
    expect(calls).toEqual([[1, 2, 3], [4]]);
  });

  it('fails only the write that cannot be written, trying each alone after a failed batch', async () => {
    const group = new GroupCommit<number, number>(
      (items) => {
        if (items.includes(13)) return Promise.reject(new Error('unlucky'));
        return Promise.resolve(items.map((n) => n + 1));
      },
      () => true,
    );
    const results = await Promise.allSettled([group.add(1), group.add(13), group.add(2)]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(results[0]).toMatchObject({ value: 2 });
    expect(results[2]).toMatchObject({ value: 3 });
  });
});

import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../src/tasks/store/group-commit.js';

describe('group commit', () => {
  it('writes what arrives in one turn of the event loop in one call, and answers each caller after it', async () => {
    const calls: number[][] = [];
    const group = new GroupCommit<number, number>((items) => {
      calls.push([...items]);
      return items.map((n) => n * 10);
    });
    const first = await Promise.all([group.add(1), group.add(2), group.add(3)]);
    const second = await group.add(4);
    expect(first).toEqual([10, 20, 30]);
    expect(second).toBe(40);
    expect(calls).toEqual([[1, 2, 3], [4]]);
  });

  it('fails only the write that cannot be written, trying each alone after a failed batch', async () => {
    const group = new GroupCommit<number, number>(async (items) => {
      if (items.includes(13)) throw new Error('unlucky');
      return items.map((n) => n + 1);
    });
    const results = await Promise.allSettled([group.add(1), group.add(13), group.add(2)]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(results[0]).toMatchObject({ value: 2 });
    expect(results[2]).toMatchObject({ value: 3 });
  });
});

// The bookings of tasks put back until their rate slot (src/tasks/upstream/limits.ts RateSlots,
// docs/channels.md "Limits"): spent by the next claim of the task only, never late, so the rate
// holds; the store's booking is stood in for by a counter of slots 100 ms apart on a set clock.
import { describe, expect, it } from 'vitest';
import { RateSlots } from '../src/tasks/upstream/limits.js';

const setup = () => {
  let now = 1_000;
  let next = now;
  let booked = 0;
  const slots = new RateSlots(
    () => {
      booked += 1;
      const at = Math.max(next, now);
      next = at + 100;
      return Promise.resolve(at);
    },
    () => now,
    60_000,
  );
  return {
    slots,
    booked: () => booked,
    at: (ms: number) => {
      now = ms;
    },
  };
};

describe('a booked rate slot', () => {
  it('is free now: the request goes, nothing kept', async () => {
    const { slots, booked } = setup();
    expect(await slots.take('a', 'wan', 'poll', 10, { now: 1, next: 2 })).toBeUndefined();
    expect(booked()).toBe(1);
  });

  it('starts later: the task is put back until it, and its next claim spends it without booking another', async () => {
    const { slots, booked, at } = setup();
    await slots.take('a', 'wan', 'poll', 10, { now: 1, next: 2 });
    expect(await slots.take('b', 'wan', 'poll', 10, { now: 1, next: 2 })).toBe(1_100);
    at(1_100);
    expect(await slots.take('b', 'wan', 'poll', 10, { now: 2, next: 3 })).toBeUndefined();
    expect(booked()).toBe(2);
  });

  it('is not spent by a claim other than the one its put-back expected: a new slot is booked', async () => {
    const { slots, booked, at } = setup();
    await slots.take('a', 'wan', 'poll', 10, { now: 1, next: 2 });
    expect(await slots.take('b', 'wan', 'poll', 10, { now: 1, next: 2 })).toBe(1_100);
    // Another process claimed it at 1,100 (attempt 2); this one gets it back at attempt 3.
    at(1_300);
    expect(await slots.take('b', 'wan', 'poll', 10, { now: 3, next: 4 })).toBeUndefined();
    expect(booked()).toBe(3);
  });

  it('is kept per bucket and channel', async () => {
    const { slots, booked, at } = setup();
    await slots.take('a', 'wan', 'poll', 10, { now: 1, next: 2 });
    await slots.take('b', 'wan', 'poll', 10, { now: 1, next: 2 });
    at(1_100);
    // The same task's submit (or another channel's poll) books its own.
    await slots.take('b', 'wan', 'submit', 10, { now: 2, next: 3 });
    await slots.take('b', 'ark', 'poll', 10, { now: 2, next: 3 });
    expect(booked()).toBe(4);
  });

  it('older than its keep time is never spent', async () => {
    const { slots, booked, at } = setup();
    await slots.take('a', 'wan', 'poll', 10, { now: 1, next: 2 });
    expect(await slots.take('b', 'wan', 'poll', 10, { now: 1, next: 2 })).toBe(1_100);
    at(1_100 + 60_001);
    await slots.take('b', 'wan', 'poll', 10, { now: 2, next: 3 });
    expect(booked()).toBe(3);
  });
});

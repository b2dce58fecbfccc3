// Who takes a channel's next free slot (src/store/slot-share.ts), the rule both stores apply
// before a submission; the stores' side is test/channel-slots.test.ts.
import { describe, expect, it } from 'vitest';
import { fairShare, mayTakeSlot, type ChannelSlots, type SlotLimits } from '../src/store/slot-share.js';

const fair = (maxInFlight: number): SlotLimits => ({ maxInFlight, perKey: null });
const slots = (held: Record<string, number>, waiting: string[]): ChannelSlots => ({ held: new Map(Object.entries(held)), waiting });

describe('a channel alone in use by one key', () => {
  it('gives the key every slot', () => {
    expect(mayTakeSlot(fair(10), slots({ a: 9 }, ['a']), 'a')).toBe(true);
    expect(mayTakeSlot({ maxInFlight: 10, perKey: 1 }, slots({ a: 9, b: 1 }, ['a']), 'a')).toBe(true);
  });
});

describe('the fair share while another key waits', () => {
  it('is max_in_flight over the keys holding or waiting, rounded up', () => {
    expect(fairShare(fair(10), slots({ a: 10 }, ['a', 'b']), 'a')).toBe(5);
    expect(fairShare(fair(10), slots({ a: 6, c: 1 }, ['a', 'b']), 'a')).toBe(4);
    expect(fairShare(fair(3), slots({}, ['a', 'b', 'c', 'd', 'e']), 'a')).toBe(1);
    expect(fairShare({ maxInFlight: 10, perKey: 2 }, slots({ a: 6 }, ['a', 'b']), 'a')).toBe(2);
  });

  it('holds back a key at its share: the free slot is the waiting key below it', () => {
    // a filled the channel alone; one of its tasks ended; b waits with none.
    expect(mayTakeSlot(fair(4), slots({ a: 3 }, ['a', 'b']), 'a')).toBe(false);
    expect(mayTakeSlot(fair(4), slots({ a: 3 }, ['a', 'b']), 'b')).toBe(true);
    // Below its share, a key takes the slot even while others wait.
    expect(mayTakeSlot(fair(4), slots({ a: 1, b: 2 }, ['a', 'b']), 'a')).toBe(true);
  });

  it('lets a key past its share when every waiting key is at its own (no slot left idle)', () => {
    // share ceil(10/3) = 4: a and b hold 4 each and wait, c holds 1 and waits for nothing.
    expect(mayTakeSlot(fair(10), slots({ a: 4, b: 4, c: 1 }, ['a', 'b']), 'a')).toBe(true);
    expect(mayTakeSlot({ maxInFlight: 10, perKey: 3 }, slots({ a: 3, b: 3 }, ['a', 'b']), 'b')).toBe(true);
    expect(mayTakeSlot({ maxInFlight: 10, perKey: 3 }, slots({ a: 3, b: 2 }, ['a', 'b']), 'a')).toBe(false);
  });
});

/**
 * Who may take a free slot of a channel (docs/channels.md "Limits"): the rule both stores apply
 * before writing `submitting`, inside the transaction that writes it, from the channel's slot
 * counters and the keys with a task waiting for it (sql/hot-paths.ts: channelHolders,
 * channelWaitingKeys). Pure, so the rule is read and tested in one place
 * (test/slot-share.test.ts), apart from the SQL that feeds it.
 *
 * The rule, for a task of key K on a channel of `max` slots:
 * 1. The channel holds `max` tasks upstream: no.
 * 2. No other key has a task waiting for the channel: yes (work-conserving: alone, a key may use
 *    every slot).
 * 3. Otherwise K's share is `perKey` when the channel sets `max_in_flight_per_key`, else
 *    ceil(max / keys), `keys` counting every key that holds a slot of the channel or has a task
 *    waiting for one (K included). Below its share, K takes the slot.
 * 4. At or above it, K takes the slot only if no other waiting key is below its share: the slot
 *    is that key's. (Were every waiting key at its share, the slot would otherwise stay idle.)
 * Slots already held are never taken back: an upstream job is paid for. Fairness decides only
 * who gets the next free slot.
 */

export interface SlotLimits {
  /** The channel's max_in_flight. */
  readonly maxInFlight: number;
  /** max_in_flight_per_key; null for the fair share ceil(maxInFlight / keys). */
  readonly perKey: number | null;
}

export interface ChannelSlots {
  /** Slots held, per key holding any. */
  readonly held: ReadonlyMap<string, number>;
  /** Keys with a task waiting for a slot (at most maxInFlight + 1 of them are needed). */
  readonly waiting: readonly string[];
}

/** How many keys waiting for a slot the rule needs to see: past maxInFlight + 1, the answer cannot change. */
export function waitingKeysCap(maxInFlight: number): number {
  return maxInFlight + 1;
}

/** The total of the channel's slots held. */
export function slotsHeld(held: ReadonlyMap<string, number>): number {
  let total = 0;
  for (const n of held.values()) total += n;
  return total;
}

/** The share of each key of the channel while others wait, per the rule above. */
export function fairShare(limits: SlotLimits, slots: ChannelSlots, owner: string): number {
  if (limits.perKey !== null) return limits.perKey;
  const keys = new Set([owner, ...slots.held.keys(), ...slots.waiting]);
  return Math.ceil(limits.maxInFlight / keys.size);
}

/**
 * Whether a task of `owner` may take a slot now. The caller has already checked that the
 * channel holds fewer than maxInFlight (`slotsHeld`), and reads `waiting` only when `owner`
 * holds a slot (a key holding none is below any share).
 */
export function mayTakeSlot(limits: SlotLimits, slots: ChannelSlots, owner: string): boolean {
  const others = slots.waiting.filter((key) => key !== owner);
  if (others.length === 0) return true;
  const share = fairShare(limits, slots, owner);
  if ((slots.held.get(owner) ?? 0) < share) return true;
  return !others.some((key) => (slots.held.get(key) ?? 0) < share);
}

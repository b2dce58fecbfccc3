// Task and delivery ids: unguessable, URL-safe, and sorted by creation, within a millisecond too
// (a list newest first orders by id).
import { describe, expect, it } from 'vitest';
import { newSortableId, newTaskId } from '../src/tasks/ids.js';

describe('ids made in one millisecond', () => {
  it('sort in the order they were made, each distinct, in the usual form', () => {
    const ms = Date.UTC(2026, 10, 26, 1, 2, 3, 4);
    const ids = Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? newTaskId('video', ms) : newTaskId('image', ms)).slice(4));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{30}$/);
    const deliveries = Array.from({ length: 50 }, () => newSortableId('msg', ms));
    expect([...deliveries].sort()).toEqual(deliveries);
  });

  it('sort after every id of an earlier millisecond', () => {
    const earlier = Array.from({ length: 20 }, () => newTaskId('video', 1_000_000));
    const later = newTaskId('video', 1_000_001);
    for (const id of earlier) expect(id < later).toBe(true);
  });
});

/**
 * How many jobs a PostgreSQL worker process fetches at once (sources/graphile.ts,
 * localQueueSize). graphile-worker serves a fetch that forbids flags straight from the table,
 * past its batch, so a runner that may skip keys (one that fetches inputs) takes one job per
 * free slot, and the others batch as many as their concurrency. test/fairness.test.ts holds
 * what the batch did to another key's latency.
 */
import { describe, expect, it } from 'vitest';
import { localQueueSize } from '../src/tasks/sources/graphile.js';

describe('the jobs a worker process fetches at once', () => {
  it('batches its concurrency when it never skips a key', () => {
    expect(localQueueSize(undefined, 6, { fetchesInputs: false })).toBe(6);
  });

  it('fetches one job per free slot when it fetches inputs, and so may skip keys', () => {
    expect(localQueueSize(undefined, 6, { fetchesInputs: true })).toBe(1);
  });

  it('takes the size it is given either way (MEDIAGATE_PG_LOCAL_QUEUE)', () => {
    expect(localQueueSize(4, 6, { fetchesInputs: true })).toBe(4);
    expect(localQueueSize(4, 6, { fetchesInputs: false })).toBe(4);
  });
});

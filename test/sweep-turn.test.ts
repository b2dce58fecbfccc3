import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sweepTurn } from '../src/storage/sweep-turn.js';
import { openBackend, type TaskBackend } from '../src/tasks/backend.js';
import { STORE_BACKENDS, type OpenedStore } from './helpers/stores.js';

/**
 * The listing sweeps of a shared bucket run in turns: whatever the number of processes, one
 * takes each turn, and the turn comes round again after half an interval, to whichever asks.
 */
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const INTERVAL = 60_000;
const T0 = 1_800_000_000_000;

for (const fixture of STORE_BACKENDS) {
  describe(`sweep turns between two processes on ${fixture.name}`, () => {
    let opened: OpenedStore;
    let other: TaskBackend;
    beforeEach(async () => {
      opened = await fixture.open();
      // A second process: its own connection (pool) to the same database.
      const location = opened.location;
      other = openBackend({
        databaseUrl: 'databaseUrl' in location ? location.databaseUrl : undefined,
        pgPoolSize: 2,
        sqlitePath: 'sqlitePath' in location ? location.sqlitePath : '',
        sqliteSynchronous: 'NORMAL',
        log: silent,
      });
    });
    afterEach(async () => {
      await other.close();
      await opened.cleanup();
    });

    it('gives each turn to one of the processes asking at once', async () => {
      const a = sweepTurn(opened.store, 'outputs', INTERVAL);
      const b = sweepTurn(other.store, 'outputs', INTERVAL);
      for (let round = 0; round < 5; round += 1) {
        const now = T0 + round * INTERVAL;
        const taken = await Promise.all([a(now), b(now), a(now), b(now)]);
        expect(taken.filter(Boolean), `round ${round}`).toHaveLength(1);
      }
    });

    it('is not due again before half an interval, and then to whoever asks (a stopped process holds nothing)', async () => {
      const a = sweepTurn(opened.store, 'inputs', INTERVAL);
      const b = sweepTurn(other.store, 'inputs', INTERVAL);
      expect(await a(T0)).toBe(true);
      expect(await a(T0 + INTERVAL / 2 - 1)).toBe(false);
      expect(await b(T0 + INTERVAL / 2 - 1)).toBe(false);
      // a stops; b's timer keeps firing.
      expect(await b(T0 + INTERVAL / 2)).toBe(true);
      expect(await b(T0 + INTERVAL - 1)).toBe(false);
      expect(await b(T0 + INTERVAL * 3)).toBe(true);
      expect(await a(T0 + INTERVAL * 3)).toBe(false);
    });

    it('keeps the turns of two sweeps apart', async () => {
      const outputs = sweepTurn(opened.store, 'outputs', INTERVAL);
      const inputs = sweepTurn(opened.store, 'inputs', INTERVAL);
      expect(await outputs(T0)).toBe(true);
      expect(await inputs(T0)).toBe(true);
    });
  });
}

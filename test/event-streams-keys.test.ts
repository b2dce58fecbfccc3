import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeyRegistry } from '../src/auth/api-keys.js';
import { EventStreams } from '../src/http/tasks/event-streams.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/store.js';
import { eventually } from './helpers/eventually.js';

/**
 * A key's open event streams end as soon as the registry hears that a key changed (the admin
 * API in this process, a notification from another on PostgreSQL), not at the next periodic
 * check: here the periodic check is a minute away.
 */
describe('event streams of a changed key', () => {
  let dir: string;
  let store: Store;
  let keys: KeyRegistry;
  let streams: EventStreams;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mediagate-streams-keys-'));
    store = openSqliteStore({ path: join(dir, 'db.sqlite'), synchronous: 'NORMAL' });
    await store.migrate();
    keys = new KeyRegistry({ store, configured: [] });
    streams = new EventStreams(keys, { maxPerKey: 10, maxLifetimeMs: 3_600_000, keyCheckMs: 60_000 });
  });
  afterEach(async () => {
    streams.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("end when the key is disabled and the registry forgets; another key's streams stay open", async () => {
    const stopped = await keys.create('mg_stopped_key_0123456789', 'stopped');
    const other = await keys.create('mg_other_key_0123456789', 'other');
    const ended: string[] = [];
    const releases = [
      streams.open(stopped, 'mg_stopped_key_0123456789', () => ended.push('stopped #1')),
      streams.open(stopped, 'mg_stopped_key_0123456789', () => ended.push('stopped #2')),
      streams.open(other, 'mg_other_key_0123456789', () => ended.push('other')),
    ];
    expect(await store.updateKey(stopped, { disabled: true }, Date.now())).toBe(true);
    keys.forgetAll();
    await eventually(() => ended.length === 2, { deadline: 5_000, what: 'the disabled key’s streams to end' });
    expect(ended.sort()).toEqual(['stopped #1', 'stopped #2']);
    // A second change: the other key's stream is checked again (checkKeys resolves when the
    // check the change started is done) and kept.
    keys.forgetAll();
    await streams.checkKeys();
    expect(ended).toHaveLength(2);
    for (const release of releases) release();
  });

  it('a change heard during a check runs the check again', async () => {
    const key = await keys.create('mg_late_key_0123456789', 'late');
    const ended: string[] = [];
    const release = streams.open(key, 'mg_late_key_0123456789', () => ended.push('late'));
    const check = streams.checkKeys(); // reads the key while it is still valid
    expect(await store.revokeKey(key, Date.now())).toBe(true);
    keys.forgetAll(); // heard while that check runs
    await check; // which then ran again
    expect(ended).toEqual(['late']);
    release();
  });
});

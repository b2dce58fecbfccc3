/**
 * The sweeper (src/storage/sweeper.ts) deletes expired outputs, render-cache entries as old,
 * and scratch directories of dead attempts; it leaves everything younger alone.
 */
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalBlobStore } from '../src/storage/local-blobs.js';
import { OutputFiles } from '../src/storage/outputs.js';
import { startSweeper, type Sweeper } from '../src/storage/sweeper.js';
import { eventually } from './helpers/eventually.js';

const HOUR_MS = 3_600_000;

async function entry(root: string, name: string, ageMs: number): Promise<void> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'file'), 'x');
  const when = new Date(Date.now() - ageMs);
  // Outputs age by their newest object (what a listing of either store shows), scratch by its folder.
  await utimes(join(dir, 'file'), when, when);
  await utimes(dir, when, when);
}

describe('the sweeper', () => {
  let sweeper: Sweeper | undefined;
  let root = '';
  afterEach(async () => {
    await sweeper?.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('removes what outlived its lifetime, at start, and keeps the rest', async () => {
    root = await mkdtemp(join(tmpdir(), 'mediagate-sweep-'));
    const [outputs, work, cache] = ['outputs', 'work', 'render-cache'].map((name) => join(root, name)) as [string, string, string];
    await entry(outputs, 'old_task', 3 * HOUR_MS);
    await entry(outputs, 'new_task', 0);
    await entry(work, 'dead_attempt', 2 * HOUR_MS);
    await entry(work, 'running_attempt', 0);
    await entry(cache, 'old_render', 3 * HOUR_MS);
    await entry(cache, 'new_render', 0);
    const removed: number[] = [];
    const logged = new Promise<void>((resolve) => {
      sweeper = startSweeper({
        storage: new OutputFiles(new LocalBlobStore(root)),
        outputTtlMs: 2 * HOUR_MS,
        workRoot: work,
        workDirMaxAgeMs: HOUR_MS,
        renderCacheRoot: cache,
        intervalMs: HOUR_MS,
        log: {
          info: (fields) => {
            removed.push((fields as { removed: number }).removed);
            resolve();
          },
          warn: (fields) => resolve(Promise.reject(new Error(JSON.stringify(fields)))),
        },
      });
    });
    await logged;
    expect(removed).toEqual([1]);
    // The log line comes after the outputs; the other two folders follow it: wait for them.
    const listing = async (): Promise<string[][]> => Promise.all([outputs, work, cache].map(async (dir) => (await readdir(dir)).sort()));
    const seen = await eventually(
      async () => {
        const now = await listing();
        return now.flat().length <= 3 && now;
      },
      { interval: 5, what: 'the expired scratch and render-cache entries to go' },
    );
    expect(seen).toEqual([['new_task'], ['running_attempt'], ['new_render']]);
  });
});

/**
 * The one end of an attempt (src/tasks/attempt-end.ts), shared by renders and upstream jobs:
 * measured, stored, completed; a lost completion leaves nothing stored. Real files in a real
 * local media store.
 */
import { copyFile, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Metered } from '../src/billing/index.js';
import { LocalBlobStore } from '../src/storage/local-blobs.js';
import { OutputFiles } from '../src/storage/outputs.js';
import type { TaskOutput } from '../src/store/records.js';
import { endAttempt, type FinishedFile } from '../src/tasks/attempt-end.js';

const FIXTURES = new URL('./fixtures/upstream/', import.meta.url).pathname;

describe('endAttempt', () => {
  let root = '';
  let storage: OutputFiles;
  let files: FinishedFile[];
  const warnings: string[] = [];
  const log = { warn: (_fields: object, msg: string) => void warnings.push(msg) };

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'mediagate-attempt-end-'));
    storage = new OutputFiles(new LocalBlobStore(join(root, 'media')));
    await copyFile(join(FIXTURES, 'tiny.mp4'), join(root, 'a.mp4'));
    await copyFile(join(FIXTURES, 'tiny.png'), join(root, 'b.png'));
    files = [
      { path: join(root, 'a.mp4'), type: 'video', contentType: 'video/mp4' },
      { path: join(root, 'b.png'), type: 'image', contentType: 'image/png' },
    ];
    warnings.length = 0;
  });
  afterEach(async () => rm(root, { recursive: true, force: true }));

  const steps = (complete: (outputs: TaskOutput[], metered: Metered | undefined) => Promise<boolean>, order: string[] = []) => ({
    taskId: 'task_1',
    log,
    put: async (file: FinishedFile) => {
      order.push('put');
      return storage.put('task_1', file.path, file.type === 'video' ? 'mp4' : 'png');
    },
    beforeSettle: () => {
      order.push('before-settle');
      return Promise.resolve();
    },
    complete: (outputs: TaskOutput[], metered: Metered | undefined) => {
      order.push('complete');
      return complete(outputs, metered);
    },
    remove: (key: string) => storage.delete(key),
  });

  it('measures the files, stores them, then completes with both', async () => {
    const order: string[] = [];
    let seen: { outputs: TaskOutput[]; metered: Metered | undefined } | undefined;
    const won = await endAttempt(
      files,
      steps((outputs, metered) => {
        seen = { outputs, metered };
        return Promise.resolve(true);
      }, order),
    );
    expect(won).toBe(true);
    expect(order).toEqual(['put', 'put', 'before-settle', 'complete']);
    expect(seen?.metered).toEqual({ seconds: 1, images: 1 });
    expect(seen?.outputs.map((output) => [output.type, output.contentType])).toEqual([
      ['video', 'video/mp4'],
      ['image', 'image/png'],
    ]);
    for (const output of seen?.outputs ?? []) expect(await storage.open(output.key)).toBeDefined();
    expect(warnings).toEqual([]);
  });

  it('deletes what it stored when the completion lost', async () => {
    let stored: TaskOutput[] = [];
    const won = await endAttempt(
      files,
      steps((outputs) => {
        stored = outputs;
        return Promise.resolve(false);
      }),
    );
    expect(won).toBe(false);
    expect(stored).toHaveLength(2);
    for (const output of stored) expect(await storage.open(output.key)).toBeUndefined();
  });

  it('completes unmeasured, with a warning, when a video cannot be read', async () => {
    await writeFile(join(root, 'a.mp4'), 'not an mp4');
    let metered: Metered | undefined = { seconds: -1, images: -1 };
    await endAttempt(
      files,
      steps((_outputs, measured) => {
        metered = measured;
        return Promise.resolve(true);
      }),
    );
    expect(metered).toBeUndefined();
    expect(warnings).toEqual(['could not measure the outputs; billing the requested duration']);
  });

  it('throws a failed store, and completes nothing', async () => {
    let completed = false;
    const failing = {
      ...steps(() => {
        completed = true;
        return Promise.resolve(true);
      }),
      put: () => Promise.reject(new Error('media store gone')),
    };
    await expect(endAttempt(files, failing)).rejects.toThrow('media store gone');
    expect(completed).toBe(false);
    expect(await readdir(join(root, 'media')).catch(() => [])).toEqual([]);
  });
});

import { execFile } from 'node:child_process';
import { watch } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';

/**
 * A statement that changes many rows inside a transaction keeps the original of each page it
 * changes in a statement journal. SQLite spills that journal to a new temporary file once it
 * passes 64 KiB, which a group commit of creates, a claim batch and a settle batch all do: an
 * open, an unlink and the journal's writes per batch, on the hot path of every create. The store
 * keeps statement journals in memory (src/store/sqlite.ts). This counts the files SQLite creates
 * in its temporary directory (SQLITE_TMPDIR, read once when the library loads, so the batches
 * run in a child process): a deterministic count, where a timing would not be.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('the SQLite store’s batches', () => {
  it('create no temporary file: 30 commits of 100 creates, 5 claims of 100 and their completions', async () => {
    const base = await mkdtemp(join(tmpdir(), 'mediagate-temp-files-'));
    dirs.push(base);
    const temp = join(base, 'sqlite-tmp');
    const data = join(base, 'data');
    await mkdir(temp);
    await mkdir(data);
    // inotify reports a file created and unlinked at once, in order: the marker written after
    // the child has exited is the last event, so once it is seen nothing earlier is missing.
    const created: string[] = [];
    const seen = new EventEmitter();
    const watcher = watch(temp, (_event, name) => {
      if (name !== null) created.push(name);
      seen.emit('change');
    });
    try {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/fixtures/sqlite-batches.ts', data], {
        cwd: ROOT,
        env: { ...process.env, SQLITE_TMPDIR: temp },
      });
      expect(JSON.parse(stdout.trim())).toMatchObject({ inserted: 3000, claimed: 500, completed: 500 });
      await writeFile(join(temp, 'marker'), '');
      await eventually(() => created.includes('marker'), { what: 'the marker file to be seen', wake: { emitter: seen } });
    } finally {
      watcher.close();
    }
    expect(created.filter((name) => name !== 'marker')).toEqual([]);
  });
});

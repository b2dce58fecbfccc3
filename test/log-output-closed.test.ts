/**
 * A process whose standard output has gone away still stops. Under `npm start 2>&1 | tee log`,
 * Ctrl-C ends `tee` too, so every log line of the shutdown meets a closed pipe (EPIPE). The
 * service must log what it can, drain and exit 0, in either log format, rather than retry
 * writing forever. Observed on a real `mediagate serve` whose stdout and stderr pipes are
 * closed by the reader before the signal.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { freePort, startProcess } from './helpers/process.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediagate-closed-stdout-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('a closed standard output does not keep the process alive', () => {
  for (const format of ['json', 'pretty'] as const) {
    it(`LOG_FORMAT=${format}: SIGINT after the reader is gone exits 0`, async () => {
      const service = await startProcess(['serve'], {
        PORT: String(await freePort()),
        MEDIAGATE_DATA_DIR: join(dir, format),
        MEDIAGATE_API_KEYS: 'mg_closed_stdout_key_0123456789',
        MEDIAGATE_ENGINE: 'instant',
        LOG_FORMAT: format,
      });
      try {
        await eventually(() => service.output().includes('mediagate listening'), { what: 'the "mediagate listening" line' });
        // The reader goes away, as `tee` does on Ctrl-C: the next write is EPIPE.
        service.child.stdout?.destroy();
        service.child.stderr?.destroy();
        service.child.kill('SIGINT');
        const code = await eventually(() => service.child.exitCode ?? service.child.signalCode ?? undefined, {
          deadline: 15_000,
          what: 'the process to exit',
        });
        expect(code).toBe(0);
      } finally {
        if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
      }
    });
  }
});

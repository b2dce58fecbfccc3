/**
 * Runs one ffmpeg process to completion: progress from its `-progress pipe:1` output, SIGKILL as
 * soon as the signal aborts (cancel, lost lease or the render deadline), and a failure that keeps ffmpeg's own words in `cause` (for the log) but out
 * of the client-visible message.
 */
import { spawn } from 'node:child_process';
import { EngineError } from '../types.js';
import type { SandboxLog } from './options.js';
import { lineSplitter, parseProgressLine } from './progress.js';

export interface FfmpegRun {
  readonly ffmpegPath: string;
  readonly args: readonly string[];
  /** Working directory: the job's workDir, so nothing relative can land elsewhere. */
  readonly cwd: string;
  /** Kills ffmpeg when aborted; the run then rejects with the signal's reason. */
  readonly signal: AbortSignal;
  /** Called with the encoded time in microseconds, as ffmpeg reports it. */
  readonly onOutTime: (microseconds: number) => void;
  readonly log: SandboxLog;
}

const STDERR_TAIL_BYTES = 4096;

/** An abort reason as an Error: the same object when it is one (callers compare it), else wrapped. */
function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error('aborted', { cause: reason });
}

export function runFfmpeg(run: FfmpegRun): Promise<void> {
  if (run.signal.aborted) return Promise.reject(abortError(run.signal));
  return new Promise<void>((resolve, reject) => {
    const child = spawn(run.ffmpegPath, run.args, { cwd: run.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    /** Why we killed the process, if we did; decides the rejection once it has exited. */
    let killedFor: Error | undefined;
    let spawnError: Error | undefined;

    const kill = (reason: Error): void => {
      if (killedFor !== undefined) return;
      killedFor = reason;
      child.kill('SIGKILL');
    };
    const onAbort = (): void => kill(abortError(run.signal));
    run.signal.addEventListener('abort', onAbort, { once: true });

    run.log('sandbox: ffmpeg started', { ffmpegPid: child.pid, args: run.args });
    child.stdout.on(
      'data',
      lineSplitter((line) => {
        const micros = parseProgressLine(line);
        if (micros !== null) run.onOutTime(micros);
      }),
    );
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    });
    child.on('error', (error) => {
      spawnError = error;
    });
    // 'close' (not 'exit'): the process is gone and its pipes are drained, so nothing of it lingers.
    child.on('close', (code, signal) => {
      run.signal.removeEventListener('abort', onAbort);
      if (killedFor !== undefined) {
        reject(killedFor);
      } else if (spawnError !== undefined) {
        reject(new EngineError('generation_failed', '', 'the video encoder could not be started', { cause: spawnError }));
      } else if (code === 0) {
        resolve();
      } else {
        run.log('sandbox: ffmpeg failed', { ffmpegPid: child.pid, code, signal, stderr });
        reject(
          new EngineError('generation_failed', '', 'the video encoder failed', {
            cause: new Error(`ffmpeg exited with ${signal ?? `code ${code}`}: ${stderr.trim()}`),
          }),
        );
      }
    });
  });
}

/**
 * The one classifier of dependency failures (src/outages.ts): what is an outage of the
 * database, of the media store, a full disk, and what is none (so it stays a 500, a task
 * failure, or a 4xx). The outage specs (outage-postgres, outage-storage) show the errors
 * real dependencies throw take these paths.
 */
import { describe, expect, it } from 'vitest';
import { Health, isDiskFull, outageOf } from '../src/outages.js';
import { FetchError } from '../src/outbound/client.js';
import { S3Error } from '../src/storage/s3/client.js';

const withCode = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

describe('outageOf', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset connection', withCode('ECONNRESET')],
    ['admin_shutdown (57P01)', withCode('57P01', 'terminating connection due to administrator command')],
    ['crash_shutdown (57P02)', withCode('57P02')],
    ['cannot_connect_now (57P03)', withCode('57P03', 'the database system is starting up')],
    ['a connection exception (08006)', withCode('08006')],
    ['the pool timeout', new Error('timeout exceeded when trying to connect')],
    ['a connection that ended', new Error('Connection terminated unexpectedly')],
    ['a cause', new Error('query failed', { cause: withCode('ECONNREFUSED') })],
  ])('%s is the database', (_name, error) => {
    expect(outageOf(error)).toBe('database');
  });

  it.each([
    ['an unreachable gateway', new FetchError('network', 'S3 PUT could not reach http://127.0.0.1:7480', { cause: withCode('ECONNREFUSED') })],
    ['a silent gateway', new FetchError('timeout', 'no answer')],
    ['a 503', new S3Error(503, 'ServiceUnavailable', 'S3 PUT answered 503')],
    ['SlowDown', new S3Error(503, 'SlowDown', 'slow down')],
    ['a 500', new S3Error(500, 'InternalError', 'S3 PUT answered 500')],
  ])('%s is the media store', (_name, error) => {
    expect(outageOf(error)).toBe('storage');
  });

  it.each([
    ['a unique violation', withCode('23505')],
    ['a syntax error', withCode('42601')],
    ['a bug', new TypeError('x is undefined')],
    ['a missing bucket', new S3Error(404, 'NoSuchBucket', 'no bucket')],
    ['refused credentials', new S3Error(403, 'AccessDenied', 'denied')],
    ['a refused address', new FetchError('refused', 'not public', { cause: withCode('ECONNREFUSED') })],
    ['nothing', undefined],
    ['a string', 'ECONNREFUSED'],
  ])('%s is no outage', (_name, error) => {
    expect(outageOf(error)).toBeUndefined();
  });
});

describe('isDiskFull', () => {
  it('reads ENOSPC and EDQUOT, in causes too, and ffmpeg’s words', () => {
    expect(isDiskFull(withCode('ENOSPC'))).toBe(true);
    expect(isDiskFull(new Error('render failed', { cause: withCode('EDQUOT') }))).toBe(true);
    expect(isDiskFull(new Error('ffmpeg exited 1: Error writing trailer: No space left on device'))).toBe(true);
    expect(isDiskFull(withCode('EACCES'))).toBe(false);
  });
});

describe('Health', () => {
  it('holds problems until cleared, and those seen in passing for their time only', () => {
    let now = 1000;
    const realNow = Date.now;
    Date.now = () => now;
    try {
      const health = new Health();
      health.set('disk', 'full');
      health.set('database', 'unreachable', 10_000);
      expect(health.list()).toEqual([
        { check: 'disk', problem: 'full' },
        { check: 'database', problem: 'unreachable' },
      ]);
      now += 10_000;
      expect(health.problem('database')).toBeUndefined();
      health.set('disk', undefined);
      expect(health.list()).toEqual([]);
      health.count('restart');
      health.count('restart');
      expect(health.counted('restart')).toBe(2);
    } finally {
      Date.now = realNow;
    }
  });
});

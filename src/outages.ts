/**
 * What a failed call to a dependency means, decided in one place: the HTTP error handler turns
 * an outage into a 503 with Retry-After instead of a 500, the worker pool retries a storage
 * write instead of failing the task, and a full disk makes a worker stop claiming instead of
 * failing what it holds. Errors are recognised by shape (their `code`, `name`, `reason`,
 * `status`), not by class, so that this file imports nothing of ours and each room can use it.
 */

/** A dependency a process cannot work without. */
export type Dependency = 'database' | 'storage';

/** Socket-level failures: the peer is not there, went away, or did not answer. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs of a server that is going away or not accepting work: 57P01
 * admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up or shutting
 * down), 53300 too_many_connections; class 08 is connection exceptions.
 */
const PG_UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '53300']);

/** What node-postgres throws when it has no connection to give or lost the one it had. */
const PG_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'connection terminated',
  'Client has encountered a connection error',
  'Connection ended',
];

/** S3 answers that mean "later": the gateway is overloaded or down. */
function isStorageAnswerUnavailable(status: unknown, code: unknown): boolean {
  return (typeof status === 'number' && (status >= 500 || status === 429)) || code === 'SlowDown' || code === 'ServiceUnavailable';
}

/** The error and its causes (and an AggregateError's members), outermost first, at most 8 deep. */
function* chain(error: unknown): Generator<Record<string, unknown>> {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0 && seen.size < 8) {
    const next = pending.shift();
    if (typeof next !== 'object' || next === null || seen.has(next)) continue;
    seen.add(next);
    const record = next as Record<string, unknown>;
    yield record;
    if ('cause' in record) pending.push(record['cause']);
    if (Array.isArray(record['errors'])) pending.push(...(record['errors'] as unknown[]));
  }
}

/**
 * The dependency an error says is unreachable, or undefined for any other error (a bug, a bad
 * input, an answer that will not change by retrying). The media store's errors come through
 * the outbound client (`FetchError`, reason `network` or `timeout`) or as S3 answers
 * (`S3Error`, 5xx or SlowDown); a bare socket error or a PostgreSQL SQLSTATE is the database's.
 */
export function outageOf(error: unknown): Dependency | undefined {
  for (const item of chain(error)) {
    const name = item['name'];
    if (name === 'FetchError') {
      const reason = item['reason'];
      if (reason === 'network' || reason === 'timeout') return 'storage';
      return undefined;
    }
    if (name === 'S3Error') return isStorageAnswerUnavailable(item['status'], item['code']) ? 'storage' : undefined;
    const code = item['code'];
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || PG_UNAVAILABLE.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return 'database';
    const message = item['message'];
    if (typeof message === 'string' && PG_MESSAGES.some((text) => message.startsWith(text))) return 'database';
  }
  return undefined;
}

/** ENOSPC (no space left) or EDQUOT (over quota): the disk, not the work, is at fault. */
export function isDiskFull(error: unknown): boolean {
  for (const item of chain(error)) {
    const code = item['code'];
    if (code === 'ENOSPC' || code === 'EDQUOT') return true;
    const message = item['message'];
    // A child process (ffmpeg) reports it only in its output.
    if (typeof message === 'string' && message.includes('No space left on device')) return true;
  }
  return false;
}

/** Seconds a client is told to wait after a 503 for an outage: a restart or failover takes about this. */
export const OUTAGE_RETRY_AFTER_S = 5;

/** How long an outage seen in passing (a failed request or write) is reported without being seen again. */
export const OUTAGE_SEEN_MS = 10_000;

/**
 * What this process cannot do now, by check name (`database`, `storage`, `job_runner`, `disk`),
 * with a sentence for an operator; readiness (/readyz, a worker's metrics listener) answers from
 * it and the metrics export it. Counters of recoveries (a job runner started again, a storage
 * write retried) ride along for the metrics.
 */
export class Health {
  private readonly problems = new Map<string, { problem: string; until: number }>();
  private readonly counts = new Map<string, number>();

  /**
   * Records a problem (a sentence), or clears it with undefined. One seen in passing (a request
   * that failed) is given `forMs`: it lapses unless seen again, since nothing may look again.
   */
  set(check: string, problem: string | undefined, forMs = Number.POSITIVE_INFINITY): void {
    if (problem === undefined) this.problems.delete(check);
    else this.problems.set(check, { problem, until: Date.now() + forMs });
  }

  problem(check: string): string | undefined {
    const entry = this.problems.get(check);
    if (entry === undefined || entry.until > Date.now()) return entry?.problem;
    this.problems.delete(check);
    return undefined;
  }

  /** Every problem now, by check name. */
  list(): { check: string; problem: string }[] {
    return [...this.problems.keys()].flatMap((check) => {
      const problem = this.problem(check);
      return problem === undefined ? [] : [{ check, problem }];
    });
  }

  count(event: string, by = 1): void {
    this.counts.set(event, (this.counts.get(event) ?? 0) + by);
  }

  counted(event: string): number {
    return this.counts.get(event) ?? 0;
  }
}

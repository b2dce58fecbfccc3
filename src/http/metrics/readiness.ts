import { errors } from '../../errors.js';
import { OUTAGE_RETRY_AFTER_S, OUTAGE_SEEN_MS, outageOf, type Health } from '../../outages.js';
import type { OutputStorage } from '../../storage/storage.js';
import type { Store } from '../../store/store.js';

/** The longest a readiness probe of one dependency waits: a check answers in bounded time. */
const PROBE_MS = 3000;

/** An output key no task has (a task id is never `readyz`): opening it reads the store and finds nothing. */
const PROBE_KEY = 'readyz/probe.png';

export interface Readiness {
  readonly ready: boolean;
  /** `ok`, or what is wrong, by check: `database`, `storage`, and a worker's `job_runner` and `disk`. */
  readonly checks: Record<string, string>;
}

/**
 * `ok`, `unreachable` (an outage), `failed: ...` (any other error, unless `reachedIsOk`: an
 * answer that is not an outage, such as S3's 403 for a missing object to a role that may not
 * list the bucket, still shows the store is there), or no answer in time.
 */
async function probe(check: () => Promise<unknown>, reachedIsOk = false): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${PROBE_MS / 1000} s`), PROBE_MS);
  });
  try {
    return await Promise.race([
      check().then(
        () => 'ok',
        (error: unknown) => {
          if (outageOf(error) !== undefined) return 'unreachable';
          return reachedIsOk ? 'ok' : `failed: ${error instanceof Error ? error.message.slice(0, 200) : 'unknown error'}`;
        },
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether this process can do its work now: the database and the media store answer (probed
 * now, at most PROBE_MS each), and nothing its workers recorded in `health` (a job runner
 * that stopped and is being started again, a full disk) holds them back. The database and the
 * store's probes also clear or set their entry in `health`.
 */
export async function checkReadiness(parts: { store: Store; storage: OutputStorage | undefined; health: Health | undefined }): Promise<Readiness> {
  const { store, storage, health } = parts;
  const [database, media] = await Promise.all([probe(() => store.countKeys()), storage ? probe(() => storage.open(PROBE_KEY), true) : Promise.resolve('ok')]);
  health?.set('database', database === 'ok' ? undefined : `the database is ${database}`, OUTAGE_SEEN_MS);
  health?.set('storage', media === 'ok' ? undefined : `the media store is ${media}`, OUTAGE_SEEN_MS);
  const checks: Record<string, string> = { database, storage: media };
  for (const { check, problem } of health?.list() ?? []) if (!(check in checks)) checks[check] = problem;
  return { ready: Object.values(checks).every((value) => value === 'ok'), checks };
}

/**
 * The answer to a readiness check: 200 `{status: "ready", checks}`, or 503 with Retry-After in
 * the video family's envelope, message naming what is down, and the same `checks` beside it.
 */
export function readinessAnswer(readiness: Readiness): { status: number; headers: Record<string, string>; body: object } {
  if (readiness.ready) return { status: 200, headers: {}, body: { status: 'ready', checks: readiness.checks } };
  const failing = Object.entries(readiness.checks).filter(([, value]) => value !== 'ok');
  const { type, code } = errors.serviceUnavailable('database', OUTAGE_RETRY_AFTER_S);
  const message = `Not ready: ${failing.map(([check, value]) => `${check}: ${value}`).join('; ')}.`;
  return {
    status: 503,
    headers: { 'retry-after': String(OUTAGE_RETRY_AFTER_S) },
    body: { error: { type, code, message, param: '' }, checks: readiness.checks },
  };
}

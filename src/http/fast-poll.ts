import type { IncomingMessage, ServerResponse } from 'node:http';
import compileStringifier from 'fast-json-stringify';
import type { KeyRegistry } from '../auth/api-keys.js';
import type { Task } from '../tasks/types.js';
import { bearerToken } from './auth.js';
import { imageTask, videoTask, type Family, type UrlFor } from './envelopes.js';
import type { KeyLimits } from './rate-limit.js';
import type { RecordRequest } from './request-metrics.js';
import { IMAGE_STATUS_RESPONSE, VIDEO_TASK_RESPONSE } from './response-schemas.js';

export interface FastPollOptions {
  readonly keys: KeyRegistry;
  readonly limits: KeyLimits | undefined;
  readonly getTask: (owner: string, id: string) => Promise<Task | undefined>;
  readonly urlFor: UrlFor;
  readonly requestId: (req: IncomingMessage) => string;
  readonly record: RecordRequest;
  /** Counts the polls this path answers. */
  readonly answered: { inc(): void };
  /** False while the server closes, or when every request must go through the framework (debug logs). */
  readonly enabled: () => boolean;
}

/**
 * Answers a status poll that succeeds (GET of an existing task, by its owner's recently seen
 * key, within its quota) beneath the framework; returns false, or calls `fallback`, for every
 * other request, which the Fastify app then serves as it would have anyway.
 */
export type FastPoll = (req: IncomingMessage, res: ServerResponse, fallback: () => void) => boolean;

// Only plain, id-shaped paths: a trailing slash, a query, escapes or anything odd go to the router.
const POLL_PATH = /^\/v1\/(?:(video)\/generations|images\/generations\/async)\/([A-Za-z0-9_-]{1,64})$/;
const ROUTES: Readonly<Record<Family, string>> = {
  video: '/v1/video/generations/:task_id',
  image: '/v1/images/generations/async/:task_id',
};

/**
 * Why this exists: clients poll, again and again, and a poll is the gateway's most frequent
 * request. Through Fastify a poll cost ~3x the bare node:http ceiling in server CPU (routing,
 * request/reply objects, a child logger, hook chains, promise turns), which capped polls at
 * ~30% of the ceiling (`npm run bench`). Everything that can differ between requests (a
 * missing or uncached key, a quota, an unknown task, a framework feature) stays with the
 * router: this path only serves the one answer the router would have given, with the same
 * body, headers, request id and metrics. test/fast-poll.test.ts holds the two side by side.
 */
export function createFastPoll(options: FastPollOptions): FastPoll {
  const { keys, limits, getTask, urlFor, requestId, record, answered, enabled } = options;
  const stringify = { video: compileStringifier(VIDEO_TASK_RESPONSE), image: compileStringifier(IMAGE_STATUS_RESPONSE) };
  const answer = (req: IncomingMessage, res: ServerResponse, family: Family, task: Task, started: number): void => {
    const body = family === 'video' ? stringify.video(videoTask(task, urlFor)) : stringify.image(imageTask(task, urlFor));
    res.writeHead(200, {
      'x-request-id': requestId(req),
      'x-content-type-options': 'nosniff',
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
    record(ROUTES[family], 'GET', 200, (performance.now() - started) / 1000);
    answered.inc();
  };

  return (req, res, fallback) => {
    if (req.method !== 'GET' || req.url === undefined || !enabled()) return false;
    const match = POLL_PATH.exec(req.url);
    if (match === null) return false;
    const key = bearerToken(req.headers.authorization);
    if (typeof key !== 'string') return false;
    const owner = keys.resolveCached(key);
    if (owner === undefined) return false;
    const family: Family = match[1] === 'video' ? 'video' : 'image';
    const started = performance.now();
    getTask(owner, match[2] ?? '')
      .then((task) => {
        // The quota is taken only for a poll this path answers: the router takes its own.
        if (task === undefined || task.kind !== family || (limits !== undefined && !limits.tryTakeRequest(owner))) fallback();
        else answer(req, res, family, task, started);
      })
      // A fault: the router reads again and reports it in the family's envelope.
      .catch(() => {
        if (!res.headersSent) fallback();
      });
    return true;
  };
}

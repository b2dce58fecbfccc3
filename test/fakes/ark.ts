import { randomUUID } from 'node:crypto';
import {
  FakeHttp,
  TaskBook,
  bearer,
  isRecord,
  type Answer,
  type FakeRequest,
  type FakeTask,
  type KitOptions,
  type Reply,
  type Route,
  type TaskPlan,
} from './upstream-kit.js';

/**
 * A fake BytePlus ModelArk content-generation API (docs/channels.md#protocol-ark; https://docs.byteplus.com/en/docs/ModelArk/1520757,
 * errors https://docs.byteplus.com/en/docs/ModelArk/1299023):
 * - `POST /api/v3/contents/generations/tasks` -> `{id:"cgt-..."}`; content roles checked
 *   (first/last frame and reference_* are mutually exclusive), resolution lower case (480p,
 *   720p, 1080p: the reference lists no 2k or 4k), ratio (16:9, 4:3, 1:1, 3:4, 9:16, 21:9,
 *   adaptive), an integer duration, boolean switches, seed -1..4294967295 ("[-1, 2^32-1]"), inline
 *   Base64 for images only and as `data:image/<lower-case format>;base64,...` (a data URL as a
 *   video or audio is an invalid parameter: the Seedance 2.0 tutorial,
 *   https://docs.byteplus.com/docs/ModelArk/2291680, asks for public URLs); the request and
 *   response bodies follow the reference's examples;
 * - `GET .../tasks/{id}`: queued -> running -> succeeded (`content.video_url`) | failed
 *   (`error.code`, output moderation late) | cancelled | expired (a stuck task past
 *   `execution_expires_after`); unknown id -> 404 `{error}`;
 * - `DELETE .../tasks/{id}`: (queued -> cancelled; running refused; finished -> deleted);
 * - `GET .../tasks?filter.task_ids=...`: `{total, items}`;
 * - at most `queueCap` (120) queued tasks: then 429; errors are `{error:{code,message,param,type}}`
 *   with `x-request-id`.
 */

export interface ArkFakeOptions extends KitOptions {
  readonly queueCap?: number;
  /** Default for tasks that do not send execution_expires_after, in seconds. */
  readonly executionExpiresAfterS?: number;
}

export interface ArkFake {
  readonly origin: string;
  readonly book: TaskBook;
  readonly http: FakeHttp;
  readonly acceptedByPrompt: Map<string, number>;
  close(): Promise<void>;
}

const TASKS = '/api/v3/contents/generations/tasks';
const ROLES: Readonly<Record<string, readonly string[]>> = {
  image_url: ['first_frame', 'last_frame', 'reference_image'],
  video_url: ['reference_video'],
  audio_url: ['reference_audio'],
};

export async function startArkFake(options: ArkFakeOptions = {}): Promise<ArkFake> {
  let next = 0;
  const book = new TaskBook(options, 'mp4', () => `cgt-20261123-${String((next += 1)).padStart(6, '0')}`);
  const apiKey = options.apiKey ?? 'ark-test-key';
  const cap = options.queueCap ?? 120;
  const acceptedByPrompt = new Map<string, number>();
  const deleted = new Set<string>();

  const error = (status: number, type: string, code: string, message: string, param = ''): Reply => {
    const requestId = randomUUID().replace(/-/g, '');
    return { status, json: { error: { code, message: `${message} Request id: ${requestId}`, param, type } }, headers: { 'x-request-id': requestId } };
  };

  function invalid(body: Record<string, unknown>): string | undefined {
    if (typeof body['model'] !== 'string' || body['model'] === '') return 'model';
    const content = body['content'];
    if (!Array.isArray(content) || content.length === 0) return 'content';
    let frames = 0;
    let references = 0;
    for (const item of content) {
      if (!isRecord(item) || typeof item['type'] !== 'string') return 'content';
      if (item['type'] === 'text') {
        if (typeof item['text'] !== 'string') return 'content.text';
        continue;
      }
      const roles = ROLES[item['type']];
      const media = item[item['type']];
      if (!roles || !isRecord(media) || typeof media['url'] !== 'string') return 'content';
      if (item['type'] !== 'image_url' && media['url'].startsWith('data:')) return `content.${item['type']}.url`;
      if (typeof item['role'] !== 'string' || !roles.includes(item['role'])) return 'content.role';
      if (item['role'] === 'first_frame' || item['role'] === 'last_frame') frames += 1;
      else references += 1;
    }
    if (frames > 0 && references > 0) return 'content.role';
    // The create-task reference's values: resolution 480p/720p/1080p (no 2k or 4k), ratio, an
    // integer duration (-1: the model decides), boolean switches; Base64 as data:image/<lower-case format>.
    for (const item of content) {
      const url = isRecord(item) && isRecord(item['image_url']) ? item['image_url']['url'] : undefined;
      if (typeof url === 'string' && url.startsWith('data:') && !/^data:image\/[a-z0-9.+-]+;base64,/.test(url)) return 'content.image_url.url';
    }
    const resolution = body['resolution'];
    if (resolution !== undefined && (typeof resolution !== 'string' || !['480p', '720p', '1080p'].includes(resolution))) return 'resolution';
    const ratio = body['ratio'];
    if (ratio !== undefined && (typeof ratio !== 'string' || !['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'].includes(ratio))) return 'ratio';
    const duration = body['duration'];
    if (duration !== undefined && (typeof duration !== 'number' || !Number.isInteger(duration) || (duration !== -1 && (duration < 2 || duration > 15))))
      return 'duration';
    for (const flag of ['generate_audio', 'camera_fixed', 'watermark', 'return_last_frame', 'draft'])
      if (body[flag] !== undefined && typeof body[flag] !== 'boolean') return flag;
    const seed = body['seed'];
    if (seed !== undefined && (typeof seed !== 'number' || !Number.isInteger(seed) || seed < -1 || seed > 4294967295)) return 'seed';
    return undefined;
  }

  function promptOf(body: Record<string, unknown>): string {
    const content = Array.isArray(body['content']) ? body['content'] : [];
    const text = content.find((item) => isRecord(item) && item['type'] === 'text');
    return isRecord(text) && typeof text['text'] === 'string' ? text['text'] : '';
  }

  function refusal(plan: TaskPlan): Reply | undefined {
    switch (plan.refuse) {
      case 'moderation':
        return error(400, 'BadRequest', 'InputTextSensitiveContentDetected', 'The request failed because the input text may contain sensitive information.');
      case 'invalid':
        return error(400, 'BadRequest', 'InvalidParameter', 'A parameter specified in the request is not valid.', 'duration');
      case 'rate-limit':
        return error(429, 'TooManyRequests', 'RateLimitExceeded.EndpointRPMExceeded', 'The request has exceeded the RPM limit.');
      case 'quota':
        return error(403, 'Forbidden', 'AccountOverdueError', 'The account is overdue.');
      case 'none':
        return undefined;
    }
  }

  function queuedCount(): number {
    let n = 0;
    for (const task of book.tasks.values()) if (book.state(task).phase === 'queued') n += 1;
    return n;
  }

  function create(req: FakeRequest): Answer {
    if (bearer(req) !== apiKey) return error(401, 'Unauthorized', 'AuthenticationError', 'The API key in the request is missing or invalid.');
    const body = req.json;
    if (!isRecord(body)) return error(400, 'BadRequest', 'InvalidParameter', 'The request body is not valid JSON.');
    const bad = invalid(body);
    if (bad) return error(400, 'BadRequest', 'InvalidParameter', `The parameter \`${bad}\` specified in the request is not valid.`, bad);
    const prompt = promptOf(body);
    const plan = book.planFor(prompt, body);
    const refused = refusal(plan);
    if (refused) return refused;
    if (queuedCount() >= cap) return error(429, 'TooManyRequests', 'QuotaExceeded', 'Too many queued tasks.');
    const expiresS = typeof body['execution_expires_after'] === 'number' ? body['execution_expires_after'] : (options.executionExpiresAfterS ?? 172_800);
    const task = book.create(prompt, body, plan, { expiresMs: String(expiresS * 1000) });
    http.stats.accepted += 1;
    http.stats.acceptedIds.push(task.id);
    acceptedByPrompt.set(prompt, (acceptedByPrompt.get(prompt) ?? 0) + 1);
    if (plan.loseAnswer) return 'lose';
    return { status: 200, json: { id: task.id }, headers: { 'x-request-id': randomUUID().replace(/-/g, '') } };
  }

  function taskBody(task: FakeTask): Record<string, unknown> {
    const state = book.state(task);
    const expired = state.phase === 'running' && task.plan.outcome === 'stuck' && book.clock() - task.createdAt > Number(task.meta['expiresMs']);
    const base = {
      id: task.id,
      model: isRecord(task.body) ? task.body['model'] : '',
      created_at: Math.floor(task.createdAt / 1000),
      updated_at: Math.floor(book.clock() / 1000),
    };
    if (expired) return { ...base, status: 'expired', error: null };
    switch (state.phase) {
      case 'queued':
        return { ...base, status: 'queued', error: null };
      case 'running':
        return { ...base, status: 'running', error: null };
      case 'cancelled':
        return { ...base, status: 'cancelled', error: null };
      case 'failed':
        return { ...base, status: 'failed', error: { code: 'InternalServiceError', message: 'The service encountered an unexpected internal error.' } };
      case 'moderated':
        return {
          ...base,
          status: 'failed',
          error: { code: 'OutputVideoSensitiveContentDetected', message: 'The request failed because the output video may contain sensitive information.' },
        };
      case 'succeeded':
        return {
          ...base,
          status: 'succeeded',
          error: null,
          content: { video_url: http.fileUrl(task, 'out.mp4') },
          usage: { completion_tokens: 108900, total_tokens: 108900 },
        };
    }
  }

  function find(id: string): FakeTask | undefined {
    return deleted.has(id) ? undefined : book.get(id);
  }

  function route(req: FakeRequest): Route | undefined {
    const path = req.url.pathname;
    const authorized = bearer(req) === apiKey;
    const denied = (): Reply => error(401, 'Unauthorized', 'AuthenticationError', 'The API key in the request is missing or invalid.');
    if (req.method === 'POST' && path === TASKS) return { role: 'submit', answer: () => create(req) };
    if (req.method === 'GET' && path === TASKS) {
      return {
        role: 'other',
        answer: (): Reply => {
          if (!authorized) return denied();
          const ids = req.url.searchParams.getAll('filter.task_ids');
          const items = [...book.tasks.values()].filter((t) => !deleted.has(t.id) && (ids.length === 0 || ids.includes(t.id))).map(taskBody);
          const size = Number(req.url.searchParams.get('page_size') ?? 10);
          return { status: 200, json: { total: items.length, items: items.slice(0, size) } };
        },
      };
    }
    const one = /^\/api\/v3\/contents\/generations\/tasks\/([^/]+)$/.exec(path);
    if (!one) return undefined;
    const id = decodeURIComponent(one[1] ?? '');
    if (req.method === 'GET') {
      return {
        role: 'poll',
        answer: (): Reply => {
          if (!authorized) return denied();
          const task = find(id);
          return task
            ? { status: 200, json: taskBody(task), headers: { 'x-request-id': randomUUID().replace(/-/g, '') } }
            : error(404, 'NotFound', 'ResourceNotFound', `The specified task ${id} is not found.`);
        },
      };
    }
    if (req.method === 'DELETE') {
      return {
        role: 'cancel',
        answer: (): Reply => {
          if (!authorized) return denied();
          const task = find(id);
          if (!task) return error(404, 'NotFound', 'ResourceNotFound', `The specified task ${id} is not found.`);
          const status = taskBody(task)['status'];
          if (status === 'queued') {
            book.cancel(task);
            return { status: 200, json: {} };
          }
          if (status === 'running' || status === 'cancelled')
            return error(400, 'BadRequest', 'InvalidParameter.TaskStatus', `A task in status ${String(status)} cannot be cancelled.`);
          deleted.add(id);
          return { status: 200, json: {} };
        },
      };
    }
    return undefined;
  }

  const http = new FakeHttp(book, route, () => error(404, 'NotFound', 'NotFound', 'Not found.'));
  await http.listen();
  return { origin: http.origin, book, http, acceptedByPrompt, close: () => http.close() };
}

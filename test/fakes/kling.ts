import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { FakeHttp, isRecord, TaskBook, bearer, type Answer, type FakeRequest, type FakeTask, type KitOptions, type Reply, type Route } from './upstream-kit.js';

/**
 * A fake of Kling's own API (docs/channels.md#protocol-kling;
 * https://app.klingai.com/global/dev/document-api/apiReference/commonInfo,
 * .../apiReference/model/textToVideo, .../apiReference/model/imageToVideo):
 * - `Authorization: Bearer <JWT>`: HS256 with the secret key, `iss` the access key, inside its
 *   `nbf`..`exp` window; anything else is HTTP 401 code 1000 (1004 when expired).
 * - `POST /v1/videos/text2video` and `/v1/videos/image2video` -> `{code: 0, data: {task_id,
 *   task_status: "submitted", task_info: {external_task_id}}}`. Refuses what Kling refuses (code
 *   1201): an unknown `model_name`, `duration` that is not the string "5" or "10" ("3".."15" on
 *   kling-v3), `mode` other than std/pro, `aspect_ratio` other than 16:9/9:16/1:1, `sound` on
 *   kling-v2-6 in std mode, an image given as a `data:` URL (Kling wants the Base64 alone),
 *   `image_tail` without `image`, and an `external_task_id` already used in the account.
 * - `GET /v1/videos/<endpoint>/<id>`: the id is a task id or an external task id; unknown is
 *   HTTP 404 code 1203. Statuses submitted, processing, succeed (with `final_unit_deduction` and
 *   `task_result.videos[{id, url, duration}]`), failed (`task_status_msg`).
 * - `GET /v1/videos/text2video?pageNum&pageSize` (probes). No cancel.
 * Markers follow upstream-kit.ts: moderation-early is HTTP 400 code 1301, rate-limit HTTP 429
 * code 1302, quota HTTP 429 code 1102, invalid HTTP 400 code 1201; a moderated task fails with
 * Kling's risk-control message.
 */

export interface KlingFake {
  readonly origin: string;
  readonly book: TaskBook;
  readonly http: FakeHttp;
  readonly acceptedByPrompt: ReadonlyMap<string, number>;
  bodyOf(taskId: string): unknown;
  /** Distinct tokens seen (a token is reused until shortly before it expires). */
  readonly tokens: Set<string>;
  close(): Promise<void>;
}

export interface KlingFakeOptions extends KitOptions {
  readonly accessKey: string;
  readonly secretKey: string;
}

const MODELS = new Set(['kling-v2-6', 'kling-v3']);
export const KLING_RISK_MESSAGE = 'Failure to pass the risk control system';

export async function startKlingFake(options: KlingFakeOptions): Promise<KlingFake> {
  const book = new TaskBook(options, 'mp4', () => randomBytes(9).toString('base64url'));
  const byExternal = new Map<string, string>();
  const tokens = new Set<string>();
  const rid = (): string => randomBytes(8).toString('hex');
  const fail = (status: number, code: number, message: string): Reply => ({ status, json: { code, message, request_id: rid() } });

  function authFault(req: FakeRequest): Reply | undefined {
    const jwt = bearer(req);
    const [head, body, signature] = jwt.split('.');
    if (head === undefined || body === undefined || signature === undefined) return fail(401, 1001, 'Authorization is empty or invalid');
    const expected = createHmac('sha256', options.secretKey).update(`${head}.${body}`).digest();
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return fail(401, 1002, 'Authorization is invalid');
    const claims: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    const header: unknown = JSON.parse(Buffer.from(head, 'base64url').toString('utf8'));
    if (!isRecord(header) || header['alg'] !== 'HS256' || !isRecord(claims) || claims['iss'] !== options.accessKey)
      return fail(401, 1002, 'Authorization is invalid');
    const now = Math.floor(Date.now() / 1000);
    if (typeof claims['nbf'] !== 'number' || claims['nbf'] > now) return fail(401, 1003, 'Authorization is not yet valid');
    if (typeof claims['exp'] !== 'number' || claims['exp'] <= now) return fail(401, 1004, 'Authorization has expired');
    tokens.add(jwt);
    return undefined;
  }

  function invalid(body: Record<string, unknown>, endpoint: string): string | undefined {
    const model = body['model_name'];
    if (typeof model !== 'string' || !MODELS.has(model)) return `model_name ${String(model)} is not supported`;
    const duration = body['duration'];
    if (duration !== undefined) {
      if (typeof duration !== 'string') return 'duration must be a string';
      const ok = model === 'kling-v3' ? /^([3-9]|1[0-5])$/.test(duration) : duration === '5' || duration === '10';
      if (!ok) return `duration ${duration} is not supported by ${model}`;
    }
    if (body['mode'] !== undefined && body['mode'] !== 'std' && body['mode'] !== 'pro') return 'mode must be std or pro';
    if (body['sound'] !== undefined && body['sound'] !== 'on' && body['sound'] !== 'off') return 'sound must be on or off';
    if (model === 'kling-v2-6' && body['sound'] === 'on' && body['mode'] !== 'pro') return 'sound is only supported in pro mode';
    if (endpoint === 'text2video') {
      if (body['aspect_ratio'] !== undefined && !['16:9', '9:16', '1:1'].some((ratio) => ratio === body['aspect_ratio'])) return 'aspect_ratio is invalid';
      if (body['image'] !== undefined) return 'image is not a text2video field';
    } else {
      if (typeof body['image'] !== 'string' || body['image'] === '') return 'image is required';
      for (const field of ['image', 'image_tail']) {
        const value = body[field];
        if (typeof value === 'string' && value.startsWith('data:')) return `${field}: Base64 must not carry a data: prefix`;
      }
      if (body['aspect_ratio'] !== undefined) return 'aspect_ratio is not an image2video field';
    }
    const external = body['external_task_id'];
    if (typeof external === 'string' && byExternal.has(external)) return 'external_task_id already exists';
    return undefined;
  }

  function taskData(task: FakeTask, endpoint: string): Record<string, unknown> {
    const state = book.state(task);
    const base = {
      task_id: task.id,
      task_info: { external_task_id: task.meta['external'] ?? '' },
      created_at: task.createdAt,
      updated_at: state.endedAt ?? task.createdAt,
    };
    switch (state.phase) {
      case 'queued':
        return { ...base, task_status: 'submitted', task_status_msg: '' };
      case 'running':
      case 'cancelled':
        return { ...base, task_status: 'processing', task_status_msg: '' };
      case 'failed':
        return { ...base, task_status: 'failed', task_status_msg: 'Internal error, please try again later' };
      case 'moderated':
        return { ...base, task_status: 'failed', task_status_msg: KLING_RISK_MESSAGE };
      case 'succeeded': {
        const body = task.body as Record<string, unknown>;
        const seconds = typeof body['duration'] === 'string' ? body['duration'] : '5';
        const videos = task.plan.output === 'missing' ? [] : [{ id: `${task.id}-0`, url: http.fileUrl(task, `${endpoint}.mp4`), duration: seconds }];
        return { ...base, task_status: 'succeed', task_status_msg: '', final_unit_deduction: body['mode'] === 'pro' ? '3.5' : '2', task_result: { videos } };
      }
    }
  }

  function create(req: FakeRequest, endpoint: string): Answer {
    const fault = authFault(req);
    if (fault) return fault;
    if (!isRecord(req.json)) return fail(400, 1200, 'Invalid request body');
    const problem = invalid(req.json, endpoint);
    if (problem) return fail(400, 1201, problem);
    const prompt = typeof req.json['prompt'] === 'string' ? req.json['prompt'] : '';
    const plan = book.planFor(prompt, req.json);
    switch (plan.refuse) {
      case 'moderation':
        return fail(400, 1301, 'The content triggered the content security policy');
      case 'invalid':
        return fail(400, 1201, 'Invalid request parameters');
      case 'rate-limit':
        return fail(429, 1302, 'The API request rate exceeds the limit');
      case 'quota':
        return fail(429, 1102, 'Resource pack exhausted or expired');
      case 'none':
        break;
    }
    const external = typeof req.json['external_task_id'] === 'string' ? req.json['external_task_id'] : '';
    const task = book.create(prompt, req.json, plan, { endpoint, external });
    if (external !== '' && !plan.forgotten) byExternal.set(external, task.id);
    http.stats.accept(task);
    if (plan.loseAnswer) return 'lose';
    return {
      status: 200,
      json: {
        code: 0,
        message: 'SUCCEED',
        request_id: rid(),
        data: { task_id: task.id, task_status: 'submitted', task_info: { external_task_id: external }, created_at: task.createdAt, updated_at: task.createdAt },
      },
    };
  }

  function get(req: FakeRequest, endpoint: string, id: string): Answer {
    const fault = authFault(req);
    if (fault) return fault;
    const task = book.get(byExternal.get(id) ?? id);
    if (!task || task.meta['endpoint'] !== endpoint) return fail(404, 1203, 'The requested resource does not exist');
    return { status: 200, json: { code: 0, message: 'SUCCEED', request_id: rid(), data: taskData(task, endpoint) } };
  }

  function route(req: FakeRequest): Route | undefined {
    const path = req.url.pathname;
    const submit = /^\/v1\/videos\/(text2video|image2video)$/.exec(path);
    if (req.method === 'POST' && submit?.[1] !== undefined) {
      const endpoint = submit[1];
      return { role: 'submit', answer: () => create(req, endpoint) };
    }
    if (req.method === 'GET' && submit?.[1] !== undefined)
      return { role: 'other', answer: () => authFault(req) ?? { status: 200, json: { code: 0, message: 'SUCCEED', request_id: rid(), data: [] } } };
    const query = /^\/v1\/videos\/(text2video|image2video)\/([A-Za-z0-9_-]+)$/.exec(path);
    if (req.method === 'GET' && query?.[1] !== undefined && query[2] !== undefined) {
      const [endpoint, id] = [query[1], query[2]];
      return { role: 'poll', answer: () => get(req, endpoint, id) };
    }
    return undefined;
  }

  const http = new FakeHttp(book, route, () => fail(404, 1202, 'The request method is invalid'));
  await http.listen();
  return {
    get origin() {
      return http.origin;
    },
    book,
    http,
    acceptedByPrompt: http.stats.acceptedByPrompt,
    bodyOf: (id) => book.get(id)?.body,
    tokens,
    close: () => http.close(),
  };
}

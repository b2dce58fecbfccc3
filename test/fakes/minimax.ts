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
 * A fake MiniMax video API (docs/channels.md#protocol-minimax; https://platform.minimax.io/docs/api-reference/video-generation-v2-create,
 * .../video-generation-v2-query, .../video-generation), both shapes:
 * - v2 (H3): `POST /v2/video_generation` -> `{task_id}`; `GET /v2/query/video_generation/{id}`
 *   -> `{task:{status: queued|running|succeeded|failed|cancelled|expired, content.url, error}}`
 *   (a task still waiting `expireAfterMs` after creation reads `expired`: not a status MiniMax
 *   documents, one a router forwarding v2 tasks lists, kept so the adapter's reading is tested);
 *   `DELETE /v2/video_generation/{id}`; list `GET /v2/query/video_generation?filter.task_ids=`.
 *   Errors as the reference shows them: `{type:"error", error:{type, message:"... (1026)",
 *   http_code:"422"}, request_id}` with that HTTP status; the business code is only in the message.
 * - v1 (Hailuo): `POST /v1/video_generation` -> `{task_id, base_resp}`;
 *   `GET /v1/query/video_generation?task_id=` -> `{status: Preparing|Queueing|Processing|Success|Fail,
 *   file_id (a string)}`; `GET /v1/files/retrieve?file_id=` -> `{file:{file_id (a number), download_url}}`.
 *   Every v1 answer carries `base_resp`; business errors (1002, 1004, 1008, 1026, 1027, 2013) come
 *   inside HTTP 200.
 * Neither shape reports progress. Failure modes follow the markers of upstream-kit.ts.
 */

export interface MinimaxFake {
  readonly origin: string;
  readonly book: TaskBook;
  readonly http: FakeHttp;
  /** Accepted submissions per prompt (see FakeStats.acceptedByPrompt). */
  readonly acceptedByPrompt: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

const H3_LIMITS: Readonly<Record<string, { resolutions: readonly string[]; min: number; max: number }>> = {
  'MiniMax-H3': { resolutions: ['768P', '2K'], min: 4, max: 15 },
  'MiniMax-H3-Max': { resolutions: ['480P', '768P'], min: 5, max: 15 },
};
const RATIOS = ['adaptive', '21:9', '16:9', '4:3', '1:1', '3:4', '9:16'];

export interface MinimaxFakeOptions extends KitOptions {
  /** A v2 task not finished this long after its creation reads `expired`. Default: never. */
  readonly expireAfterMs?: number;
}

export async function startMinimaxFake(options: MinimaxFakeOptions = {}): Promise<MinimaxFake> {
  let next = 106916112212000;
  const book = new TaskBook(options, 'mp4', () => String((next += 1)));
  const apiKey = options.apiKey ?? 'minimax-test-key';
  const files = new Map<string, string>();
  const requestId = (): string => `req-${Math.random().toString(16).slice(2, 10)}`;

  // ---- v2 --------------------------------------------------------------------------------

  /** The documented v2 error: the business code at the end of the message, `http_code` a string. */
  const v2Error = (status: number, type: string, message: string, code: number): Reply => ({
    status,
    json: { type: 'error', error: { type, message: `${message} (${code})`, http_code: String(status) }, request_id: requestId() },
  });

  function v2Invalid(body: Record<string, unknown>): string | undefined {
    const model = body['model'];
    if (typeof model !== 'string' || model === '') return 'model is required';
    const content = body['content'];
    if (!Array.isArray(content) || content.length === 0) return 'content is required';
    let frames = 0;
    let references = 0;
    let text = false;
    for (const item of content) {
      if (!isRecord(item)) return 'content item must be an object';
      if (item['type'] === 'text') {
        if (typeof item['text'] !== 'string' || item['text'].length > 7000) return 'text must be at most 7000 characters';
        text = true;
      } else if (item['type'] === 'image_url') {
        const image = item['image_url'];
        const url = typeof image === 'string' ? image : isRecord(image) ? image['url'] : undefined;
        if (typeof url !== 'string' || url === '') return 'image_url.url is required';
        const role = item['role'] ?? 'first_frame';
        if (role === 'first_frame' || role === 'last_frame') frames += 1;
        else if (role === 'reference_image') references += 1;
        else return `unknown image role ${JSON.stringify(role)}`;
      } else if (item['type'] === 'video_url' || item['type'] === 'audio_url') {
        const expected = item['type'] === 'video_url' ? 'reference_video' : 'reference_audio';
        if (item['role'] !== expected) return `${String(item['type'])} requires role ${expected}`;
        references += 1;
      } else return `unknown content type ${String(item['type'])}`;
    }
    if (frames > 0 && references > 0) return 'frames and references are mutually exclusive';
    const ratio = body['ratio'] ?? (frames + references === 0 ? '16:9' : 'adaptive');
    if (typeof ratio !== 'string' || !RATIOS.includes(ratio)) return 'invalid ratio';
    if (frames + references === 0 && ratio === 'adaptive') return 'text-only requests need a non-adaptive ratio';
    if (!text && frames + references === 0) return 'content needs text or media';
    const limits = H3_LIMITS[model];
    if (limits) {
      const resolution = body['resolution'] ?? '768P';
      if (typeof resolution !== 'string' || !limits.resolutions.includes(resolution)) return `resolution must be one of ${limits.resolutions.join(', ')}`;
      const duration = body['duration'] ?? 5;
      if (typeof duration !== 'number' || duration < limits.min || duration > limits.max) return `duration must be ${limits.min}-${limits.max}`;
    }
    return undefined;
  }

  function promptOf(body: Record<string, unknown>): string {
    const content = Array.isArray(body['content']) ? body['content'] : [];
    const text = content.find((item) => isRecord(item) && item['type'] === 'text');
    return isRecord(text) && typeof text['text'] === 'string' ? text['text'] : typeof body['prompt'] === 'string' ? body['prompt'] : '';
  }

  function refusalV2(plan: TaskPlan): Reply | undefined {
    switch (plan.refuse) {
      case 'moderation':
        return v2Error(422, 'unprocessable_entity_error', 'video description contains sensitive content', 1026);
      case 'invalid':
        return v2Error(400, 'bad_request_error', 'invalid params', 2013);
      case 'rate-limit':
        return v2Error(429, 'rate_limit_error', 'rate limit, please retry later', 1002);
      case 'quota':
        return v2Error(402, 'insufficient_balance_error', 'insufficient balance', 1008);
      case 'none':
        return undefined;
    }
  }

  function createV2(req: FakeRequest): Answer {
    if (bearer(req) !== apiKey) return unauthorized();
    const body = req.json;
    if (!isRecord(body)) return v2Error(400, 'bad_request_error', 'invalid params, invalid json body', 2013);
    const invalid = v2Invalid(body);
    if (invalid) return v2Error(400, 'bad_request_error', `invalid params, ${invalid}`, 2013);
    const prompt = promptOf(body);
    const plan = book.planFor(prompt, body);
    const refused = refusalV2(plan);
    if (refused) return refused;
    const task = book.create(prompt, body, plan, { version: 'v2' });
    http.stats.accept(task);
    return plan.loseAnswer ? 'lose' : { status: 200, json: { task_id: task.id } };
  }

  const unauthorized = (): Reply =>
    v2Error(401, 'authorized_error', "login fail: Please carry the API secret key in the 'Authorization' field of the request header", 1004);

  function v2Task(task: FakeTask): Record<string, unknown> {
    const state = book.state(task);
    const expired =
      options.expireAfterMs !== undefined && (state.phase === 'queued' || state.phase === 'running') && book.clock() - task.createdAt > options.expireAfterMs;
    const body = isRecord(task.body) ? task.body : {};
    const words = { queued: 'queued', running: 'running', succeeded: 'succeeded', failed: 'failed', moderated: 'failed', cancelled: 'cancelled' } as const;
    const error =
      state.phase === 'failed'
        ? { code: '1000', message: 'video generation failed' }
        : state.phase === 'moderated'
          ? { code: '1027', message: 'output new_sensitive' }
          : null;
    return {
      id: task.id,
      model: body['model'],
      status: expired ? 'expired' : words[state.phase],
      error,
      created_at: Math.floor(task.createdAt / 1000),
      updated_at: Math.floor((state.endedAt ?? book.clock()) / 1000),
      content: state.phase === 'succeeded' ? { url: http.fileUrl(task, 'output.mp4') } : null,
      resolution: body['resolution'] ?? '768P',
      duration: body['duration'] ?? 5,
      ratio: body['ratio'] ?? 'adaptive',
      usage:
        state.phase === 'succeeded'
          ? { total_seconds: body['duration'] ?? 5, input_seconds: 0, output_seconds: body['duration'] ?? 5, input_image_count: 0 }
          : null,
    };
  }

  function queryV2(req: FakeRequest, id: string): Answer {
    if (bearer(req) !== apiKey) return unauthorized();
    const task = book.get(id);
    if (!task || task.meta['version'] !== 'v2') return v2Error(400, 'bad_request_error', 'invalid task_id', 2013);
    return { status: 200, json: { task: v2Task(task) } };
  }

  function listV2(req: FakeRequest): Answer {
    if (bearer(req) !== apiKey) return unauthorized();
    const ids = req.url.searchParams.getAll('filter.task_ids');
    const tasks = [...book.tasks.values()].filter((t) => t.meta['version'] === 'v2' && (ids.length === 0 || ids.includes(t.id)));
    return { status: 200, json: { tasks: tasks.slice(0, 100).map(v2Task), total: tasks.length } };
  }

  function deleteV2(req: FakeRequest, id: string): Answer {
    if (bearer(req) !== apiKey) return unauthorized();
    const task = book.get(id);
    if (!task || task.meta['version'] !== 'v2') return v2Error(400, 'bad_request_error', 'invalid task_id', 2013);
    if (!book.cancel(task)) return v2Error(400, 'bad_request_error', `task is ${book.state(task).phase}, cannot be cancelled`, 2013);
    return { status: 200, json: { task_id: task.id, status: 'cancelled' } };
  }

  // ---- v1 --------------------------------------------------------------------------------

  const baseResp = (code = 0, msg = 'success'): Record<string, unknown> => ({ base_resp: { status_code: code, status_msg: msg } });

  function createV1(req: FakeRequest): Answer {
    if (bearer(req) !== apiKey) return { status: 200, json: { task_id: '', ...baseResp(1004, 'authorization failed') } };
    const body = req.json;
    if (!isRecord(body) || typeof body['model'] !== 'string') return { status: 200, json: { task_id: '', ...baseResp(2013, 'invalid params, model') } };
    const prompt = typeof body['prompt'] === 'string' ? body['prompt'] : '';
    if (prompt.length > 2000) return { status: 200, json: { task_id: '', ...baseResp(2013, 'invalid params, prompt too long') } };
    const plan = book.planFor(prompt, body);
    const refusals = {
      moderation: [1026, 'input new_sensitive'],
      invalid: [2013, 'invalid params'],
      'rate-limit': [1002, 'rate limit exceeded'],
      quota: [1008, 'insufficient balance'],
    } as const;
    if (plan.refuse !== 'none') {
      const [code, msg] = refusals[plan.refuse];
      return { status: 200, json: { task_id: '', ...baseResp(code, msg) } };
    }
    const task = book.create(prompt, body, plan, { version: 'v1' });
    files.set(`${task.id}9`, task.id);
    http.stats.accept(task);
    return plan.loseAnswer ? 'lose' : { status: 200, json: { task_id: task.id, ...baseResp() } };
  }

  function queryV1(req: FakeRequest): Answer {
    if (bearer(req) !== apiKey) return { status: 200, json: { ...baseResp(1004, 'authorization failed') } };
    const id = req.url.searchParams.get('task_id') ?? '';
    const task = book.get(id);
    if (!task || task.meta['version'] !== 'v1') return { status: 200, json: { task_id: id, status: '', ...baseResp(2013, 'invalid params, task not found') } };
    const state = book.state(task);
    const queuedHalf = book.clock() < task.createdAt + task.plan.queuedMs / 2;
    switch (state.phase) {
      case 'queued':
        return { status: 200, json: { task_id: id, status: queuedHalf ? 'Preparing' : 'Queueing', file_id: '', ...baseResp() } };
      case 'running':
        return { status: 200, json: { task_id: id, status: 'Processing', file_id: '', ...baseResp() } };
      case 'succeeded':
        return { status: 200, json: { task_id: id, status: 'Success', file_id: `${id}9`, video_width: 64, video_height: 64, ...baseResp() } };
      case 'moderated':
        return { status: 200, json: { task_id: id, status: 'Fail', file_id: '', ...baseResp(1027, 'output new_sensitive') } };
      case 'failed':
      case 'cancelled':
        return { status: 200, json: { task_id: id, status: 'Fail', file_id: '', ...baseResp(1000, 'unknown error') } };
    }
  }

  function retrieveV1(req: FakeRequest): Answer {
    if (bearer(req) !== apiKey) return { status: 200, json: { ...baseResp(1004, 'authorization failed') } };
    const fileId = req.url.searchParams.get('file_id') ?? '';
    const task = book.get(files.get(fileId) ?? '');
    if (!task) return { status: 200, json: { ...baseResp(2013, 'invalid params, file not found') } };
    const url = http.fileUrl(task, 'output.mp4');
    // file_id is a number here and a string in the query answer: the upstream's own inconsistency.
    return {
      status: 200,
      json: {
        file: {
          file_id: Number(fileId),
          bytes: 0,
          created_at: Math.floor(task.createdAt / 1000),
          filename: 'output.mp4',
          purpose: 'video_generation',
          download_url: url,
          backup_download_url: url,
        },
        ...baseResp(),
      },
    };
  }

  function route(req: FakeRequest): Route | undefined {
    const path = req.url.pathname;
    if (req.method === 'POST' && path === '/v2/video_generation') return { role: 'submit', answer: () => createV2(req) };
    if (req.method === 'GET' && path === '/v2/query/video_generation') return { role: 'other', answer: () => listV2(req) };
    const query = /^\/v2\/query\/video_generation\/([^/]+)$/.exec(path);
    const queryId = query?.[1];
    if (req.method === 'GET' && queryId) return { role: 'poll', answer: () => queryV2(req, decodeURIComponent(queryId)) };
    const del = /^\/v2\/video_generation\/([^/]+)$/.exec(path);
    const delId = del?.[1];
    if (req.method === 'DELETE' && delId) return { role: 'cancel', answer: () => deleteV2(req, decodeURIComponent(delId)) };
    if (req.method === 'POST' && path === '/v1/video_generation') return { role: 'submit', answer: () => createV1(req) };
    if (req.method === 'GET' && path === '/v1/query/video_generation') return { role: 'poll', answer: () => queryV1(req) };
    if (req.method === 'GET' && path === '/v1/files/retrieve') return { role: 'poll', answer: () => retrieveV1(req) };
    return undefined;
  }

  const http = new FakeHttp(book, route, () => v2Error(404, 'not_found_error', 'not found', 1000));
  await http.listen();
  return {
    get origin() {
      return http.origin;
    },
    book,
    http,
    acceptedByPrompt: http.stats.acceptedByPrompt,
    close: () => http.close(),
  };
}

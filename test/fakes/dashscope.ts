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
 * A fake DashScope (docs/channels.md#protocol-dashscope; Model Studio https://www.alibabacloud.com/help/en/model-studio/image-to-video-general-api-reference,
 * .../wan-image-generation-api-reference, .../manage-asynchronous-tasks, .../developer-reference/error-code):
 * - `POST /api/v1/services/aigc/video-generation/video-synthesis` and
 *   `POST /api/v1/services/aigc/image-generation/generation`: require `X-DashScope-Async: enable`
 *   (403 AccessDenied without), answer `{output:{task_status:"PENDING",task_id},request_id}`;
 * - `GET /api/v1/tasks/{id}`: PENDING -> RUNNING -> SUCCEEDED | FAILED (`output.code/message`),
 *   CANCELED; an unknown or expired (`taskTtlMs`, 24 h) id is HTTP 200 `UNKNOWN`;
 * - `POST /api/v1/tasks/{id}/cancel`: PENDING only;
 * - errors `{code,message,request_id}`: 400 InvalidParameter / DataInspectionFailed / Arrearage,
 *   401 InvalidApiKey, 429 Throttling.RateQuota. `errorsInHttp200` answers refusals with HTTP 200
 *   (as some relays in front of DashScope do) to exercise business errors inside a 200.
 * Output URLs carry `?Expires=` and the fake's file server answers 403 once they expire.
 * Per model: wan2.7-i2v takes 720P or 1080P and Wan 2.7 an integer duration of 2 to 15 s (the
 * image-to-video reference); wan2.6-t2i refuses a size outside 1280*1280..1440*1440 pixels or ratio 1:4..4:1
 * (InvalidParameter); Wan 2.7 lists no `parameters.audio` (recorded in `undocumented`). Prompt
 * markers of its own: `[fake:download-fail]` (400 `InvalidParameter.DataInspection`: an input
 * could not be downloaded), `[fake:ip]` (the task fails `IPInfringementSuspect`).
 */

export interface DashscopeFakeOptions extends KitOptions {
  /** Query of a task older than this answers UNKNOWN (DashScope keeps tasks 24 h). */
  readonly taskTtlMs?: number;
  readonly errorsInHttp200?: boolean;
}

export interface DashscopeFake {
  readonly origin: string;
  readonly book: TaskBook;
  readonly http: FakeHttp;
  /** Accepted submissions per prompt: the "one paid job per task" counter. */
  readonly acceptedByPrompt: Map<string, number>;
  /** Parameters a model's reference does not list, per task id (DashScope's handling is not documented). */
  readonly undocumented: Map<string, string[]>;
  close(): Promise<void>;
}

const VIDEO = '/api/v1/services/aigc/video-generation/video-synthesis';
const IMAGE = '/api/v1/services/aigc/image-generation/generation';
const MEDIA_TYPES = new Set(['first_frame', 'last_frame', 'driving_audio', 'first_clip', 'reference_image', 'reference_video', 'reference_audio']);

export async function startDashscopeFake(options: DashscopeFakeOptions = {}): Promise<DashscopeFake> {
  const book = new TaskBook(options, 'mp4');
  const apiKey = options.apiKey ?? 'sk-dashscope-test';
  const ttl = options.taskTtlMs ?? 24 * 3_600_000;
  const acceptedByPrompt = new Map<string, number>();
  const undocumented = new Map<string, string[]>();

  const error = (status: number, code: string, message: string): Reply => ({
    status: options.errorsInHttp200 && status !== 401 ? 200 : status,
    json: { code, message, request_id: randomUUID() },
  });

  function invalid(body: Record<string, unknown>, image: boolean): string | undefined {
    if (typeof body['model'] !== 'string' || body['model'] === '') return 'Field required: model';
    const input = body['input'];
    if (!isRecord(input)) return 'Field required: input';
    if (image) {
      if (!Array.isArray(input['messages']) || input['messages'].length === 0) return 'Field required: input.messages';
    } else {
      if (typeof input['prompt'] !== 'string') return 'Field required: input.prompt';
      for (const item of Array.isArray(input['media']) ? input['media'] : []) {
        if (!isRecord(item) || typeof item['type'] !== 'string' || !MEDIA_TYPES.has(item['type'])) return 'input.media[].type is invalid';
        if (typeof item['url'] !== 'string' || !/^(https?:|data:)/.test(item['url'])) return 'InvalidURL';
      }
    }
    const parameters = isRecord(body['parameters']) ? body['parameters'] : {};
    const resolution = parameters['resolution'];
    if (resolution !== undefined && (typeof resolution !== 'string' || !/^(480|720|1080)P$/.test(resolution)))
      return 'parameters.resolution must be 480P, 720P or 1080P';
    // The Wan 2.7 image-to-video reference: 720P or 1080P, an integer duration of 2 to 15 seconds.
    if (body['model'] === 'wan2.7-i2v' && resolution !== undefined && resolution !== '720P' && resolution !== '1080P')
      return 'parameters.resolution must be 720P or 1080P';
    const duration = parameters['duration'];
    if (
      /^wan2\.7/.test(String(body['model'])) &&
      duration !== undefined &&
      (typeof duration !== 'number' || !Number.isInteger(duration) || duration < 2 || duration > 15)
    )
      return 'parameters.duration must be an integer from 2 to 15';
    const seed = parameters['seed'];
    if (seed !== undefined && (typeof seed !== 'number' || seed < 0 || seed > 2147483647)) return 'parameters.seed must be in [0, 2147483647]';
    if (image && (typeof parameters['size'] !== 'string' || !/^\d+\*\d+$/.test(parameters['size']))) return 'parameters.size must be W*H';
    if (image && body['model'] === 'wan2.6-t2i') {
      const [w = 0, h = 0] = String(parameters['size']).split('*').map(Number);
      if (w * h < 1280 * 1280 || w * h > 1440 * 1440 || w / h < 0.25 || w / h > 4)
        return 'parameters.size: the total pixels must be between 1280*1280 and 1440*1440, the aspect ratio between 1:4 and 4:1';
    }
    return undefined;
  }

  function promptOf(body: Record<string, unknown>): string {
    const input = isRecord(body['input']) ? body['input'] : {};
    if (typeof input['prompt'] === 'string') return input['prompt'];
    const first = Array.isArray(input['messages']) ? input['messages'][0] : undefined;
    const content = isRecord(first) && Array.isArray(first['content']) ? first['content'][0] : undefined;
    return isRecord(content) && typeof content['text'] === 'string' ? content['text'] : '';
  }

  function refusal(plan: TaskPlan): Reply | undefined {
    switch (plan.refuse) {
      case 'moderation':
        return error(400, 'DataInspectionFailed', 'Input data may contain inappropriate content.');
      case 'invalid':
        return error(400, 'InvalidParameter', 'The parameter is invalid.');
      case 'rate-limit':
        return { ...error(429, 'Throttling.RateQuota', 'Requests rate limit exceeded, please try again later.'), status: 429 };
      case 'quota':
        return error(400, 'Arrearage', 'Access denied, please make sure your account is in good standing.');
      case 'none':
        return undefined;
    }
  }

  function create(req: FakeRequest, image: boolean): Answer {
    if (bearer(req) !== apiKey) return error(401, 'InvalidApiKey', 'Invalid API-key provided.');
    if (req.headers['x-dashscope-async'] !== 'enable') return error(403, 'AccessDenied', 'current user api does not support synchronous calls');
    const body = req.json;
    if (!isRecord(body)) return error(400, 'InvalidParameter', 'The request body is not valid JSON.');
    const bad = invalid(body, image);
    if (bad) return error(400, bad === 'InvalidURL' ? 'InvalidURL' : 'InvalidParameter', bad);
    const prompt = promptOf(body);
    if (prompt.includes('[fake:download-fail]'))
      return error(400, 'InvalidParameter.DataInspection', 'Download the media resource timed out during the data inspection process.');
    let plan = book.planFor(prompt, body);
    if (image && plan.output === 'mp4') plan = { ...plan, output: 'png' };
    const refused = refusal(plan);
    if (refused) return refused;
    const task = book.create(prompt, body, plan, { kind: image ? 'image' : 'video', ip: prompt.includes('[fake:ip]') ? '1' : '' });
    const parameters = isRecord(body['parameters']) ? body['parameters'] : {};
    if (/^wan2\.7/.test(String(body['model'])) && parameters['audio'] !== undefined) undocumented.set(task.id, ['parameters.audio']);
    http.stats.accepted += 1;
    http.stats.acceptedIds.push(task.id);
    acceptedByPrompt.set(prompt, (acceptedByPrompt.get(prompt) ?? 0) + 1);
    if (plan.loseAnswer) return 'lose';
    return { status: 200, json: { output: { task_status: 'PENDING', task_id: task.id }, request_id: randomUUID() } };
  }

  function taskBody(task: FakeTask): Record<string, unknown> {
    const state = book.state(task);
    const output: Record<string, unknown> = { task_id: task.id, submit_time: '2026-11-23 09:00:00.000' };
    switch (state.phase) {
      case 'queued':
        output['task_status'] = 'PENDING';
        break;
      case 'running':
        output['task_status'] = 'RUNNING';
        break;
      case 'cancelled':
        output['task_status'] = 'CANCELED';
        break;
      case 'failed':
        Object.assign(output, { task_status: 'FAILED', code: 'InternalError.Algo', message: 'Algorithm process error.' });
        break;
      case 'moderated':
        Object.assign(output, { task_status: 'FAILED', code: 'DataInspectionFailed', message: 'Output data may contain inappropriate content.' });
        break;
      case 'succeeded':
        if (task.meta['ip'] === '1') {
          Object.assign(output, {
            task_status: 'FAILED',
            code: 'IPInfringementSuspect',
            message: 'Input data is suspected of being involved in IP infringement.',
          });
          break;
        }
        output['task_status'] = 'SUCCEEDED';
        if (task.meta['kind'] === 'image') output['choices'] = [{ message: { content: [{ type: 'image', image: http.fileUrl(task, 'out.png') }] } }];
        else output['video_url'] = http.fileUrl(task, 'out.mp4');
        break;
    }
    const body = isRecord(task.body) ? task.body : {};
    const parameters = isRecord(body['parameters']) ? body['parameters'] : {};
    const usage =
      task.meta['kind'] === 'image'
        ? { size: parameters['size'], image_count: 1, input_tokens: 0, output_tokens: 0, total_tokens: 0 }
        : { video_duration: typeof parameters['duration'] === 'number' ? parameters['duration'] : 5, video_count: 1, SR: 720 };
    return { request_id: randomUUID(), output, ...(output['task_status'] === 'SUCCEEDED' ? { usage } : {}) };
  }

  function known(id: string): FakeTask | undefined {
    const task = book.get(id);
    return task && book.clock() - task.createdAt <= ttl ? task : undefined;
  }

  function route(req: FakeRequest): Route | undefined {
    const path = req.url.pathname;
    if (req.method === 'POST' && path === VIDEO) return { role: 'submit', answer: () => create(req, false) };
    if (req.method === 'POST' && path === IMAGE) return { role: 'submit', answer: () => create(req, true) };
    const cancel = /^\/api\/v1\/tasks\/([^/]+)\/cancel$/.exec(path);
    if (req.method === 'POST' && cancel) {
      const id = decodeURIComponent(cancel[1] ?? '');
      return {
        role: 'cancel',
        answer: (): Reply => {
          if (bearer(req) !== apiKey) return error(401, 'InvalidApiKey', 'Invalid API-key provided.');
          const task = known(id);
          if (!task || book.state(task).phase !== 'queued') {
            return {
              status: 400,
              json: {
                code: 'UnsupportedOperation',
                message: 'Failed to cancel the task, please confirm if the task is in PENDING status.',
                request_id: randomUUID(),
              },
            };
          }
          book.cancel(task);
          return { status: 200, json: { request_id: randomUUID() } };
        },
      };
    }
    const query = /^\/api\/v1\/tasks\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && query) {
      const id = decodeURIComponent(query[1] ?? '');
      return {
        role: 'poll',
        answer: (): Reply => {
          if (bearer(req) !== apiKey) return error(401, 'InvalidApiKey', 'Invalid API-key provided.');
          const task = known(id);
          return task
            ? { status: 200, json: taskBody(task) }
            : { status: 200, json: { request_id: randomUUID(), output: { task_id: id, task_status: 'UNKNOWN' } } };
        },
      };
    }
    return undefined;
  }

  const http = new FakeHttp(book, route, () => ({ status: 404, json: { code: 'NotFound', message: 'Not found', request_id: randomUUID() } }));
  await http.listen();
  return { origin: http.origin, book, http, acceptedByPrompt, undocumented, close: () => http.close() };
}

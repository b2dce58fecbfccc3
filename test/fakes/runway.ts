import { randomUUID } from 'node:crypto';
import { FakeHttp, isRecord, TaskBook, bearer, type Answer, type FakeRequest, type FakeTask, type KitOptions, type Reply, type Route } from './upstream-kit.js';

/**
 * A fake of Runway's developer API (docs/channels.md#protocol-runway; https://docs.dev.runwayml.com/api/,
 * https://docs.dev.runwayml.com/errors/task-failures/; runwayml/sdk-node sdk-node/src/resources/image-to-video.ts,
 * text-to-video.ts, tasks.ts, organization.ts):
 * - `Authorization: Bearer <key>` (401 `{error}` otherwise) and `X-Runway-Version: 2024-11-06`
 *   (400 `{error}` when missing or another version).
 * - `POST /v1/image_to_video`, `POST /v1/text_to_video` -> `{id}` (a UUID). Refuses with 400
 *   `{error}` what the SDK's types refuse: an unknown model, a missing or wrong `ratio` for the
 *   model, `duration` out of the model's values (gen4.5 2..10 required, gen4_turbo 5 or 10,
 *   veo3.1 4/6/8), `gen4_turbo` from text, a `last` frame on a Gen-4 model, `audio` on Gen-4,
 *   `seed` on veo3.1, a text-to-video gen4.5 ratio other than 1280:720 or 720:1280.
 * - `GET /v1/tasks/{id}`: PENDING, RUNNING (`progress` 0..1), SUCCEEDED (`output[]`), FAILED
 *   (`failure`, `failureCode`: INTERNAL.BAD_OUTPUT.CODE01, or SAFETY.OUTPUT.VIDEO for a moderated
 *   task, SAFETY.INPUT.TEXT for moderation-early: Runway reports input moderation on the task).
 * - `DELETE /v1/tasks/{id}` -> 204; the task is cancelled, and a cancelled task is never fetched
 *   again (404), as tasks.ts says.
 * - `GET /v1/organization` (probes). Markers follow upstream-kit.ts; rate-limit and quota are 429.
 */

export interface RunwayFake {
  readonly origin: string;
  readonly book: TaskBook;
  readonly http: FakeHttp;
  readonly acceptedByPrompt: ReadonlyMap<string, number>;
  /** Tasks cancelled with DELETE, by id. */
  readonly deleted: Set<string>;
  close(): Promise<void>;
}

const GEN4_RATIOS = ['1280:720', '720:1280', '1104:832', '960:960', '832:1104', '1584:672'];
const VEO_RATIOS = ['1280:720', '720:1280', '1080:1920', '1920:1080'];

export async function startRunwayFake(options: KitOptions = {}): Promise<RunwayFake> {
  const book = new TaskBook(options, 'mp4', randomUUID);
  const apiKey = options.apiKey ?? 'runway-test-key';
  const deleted = new Set<string>();
  const error = (status: number, message: string): Reply => ({ status, json: { error: message } });

  function authFault(req: FakeRequest): Reply | undefined {
    if (bearer(req) !== apiKey) return error(401, 'Invalid API key.');
    if (req.headers['x-runway-version'] !== '2024-11-06') return error(400, 'X-Runway-Version header is missing or invalid.');
    return undefined;
  }

  function invalid(body: Record<string, unknown>, fromImage: boolean): string | undefined {
    const model = body['model'];
    const ratio = body['ratio'];
    const duration = body['duration'];
    if (model !== 'gen4.5' && model !== 'gen4_turbo' && model !== 'veo3.1') return `Invalid model: ${String(model)}`;
    if (model === 'gen4_turbo' && !fromImage) return 'gen4_turbo is not available for text_to_video';
    if (typeof ratio !== 'string') return 'ratio is required';
    if (model === 'veo3.1') {
      if (!VEO_RATIOS.includes(ratio)) return `Invalid ratio for veo3.1: ${ratio}`;
      if (duration !== undefined && duration !== 4 && duration !== 6 && duration !== 8) return 'duration must be 4, 6 or 8';
      if (body['seed'] !== undefined) return 'seed is not supported by veo3.1';
    } else {
      const ratios = model === 'gen4.5' && !fromImage ? ['1280:720', '720:1280'] : GEN4_RATIOS;
      if (!ratios.includes(ratio)) return `Invalid ratio for ${model}: ${ratio}`;
      if (model === 'gen4.5' && (typeof duration !== 'number' || !Number.isInteger(duration) || duration < 2 || duration > 10))
        return 'duration must be an integer from 2 to 10';
      if (model === 'gen4_turbo' && duration !== undefined && duration !== 5 && duration !== 10) return 'duration must be 5 or 10';
      if (body['audio'] !== undefined) return `audio is not supported by ${model}`;
    }
    if (fromImage) {
      const frames = body['promptImage'];
      if (!Array.isArray(frames) || frames.length === 0) return 'promptImage is required';
      for (const frame of frames as unknown[]) {
        if (!isRecord(frame) || typeof frame['uri'] !== 'string' || !/^(https:|data:image\/)/.test(frame['uri']))
          return 'promptImage uri must be an HTTPS URL or data URI';
        if (frame['position'] === 'last' && model !== 'veo3.1') return `${model} takes a first frame only`;
      }
    }
    return undefined;
  }

  function taskJson(task: FakeTask): Record<string, unknown> {
    const state = book.state(task);
    const base = { id: task.id, createdAt: new Date(task.createdAt).toISOString() };
    if (task.plan.refuse === 'moderation')
      return { ...base, status: 'FAILED', failure: 'Your prompt did not pass moderation.', failureCode: 'SAFETY.INPUT.TEXT' };
    switch (state.phase) {
      case 'queued':
      case 'cancelled':
        return { ...base, status: 'PENDING' };
      case 'running':
        return { ...base, status: 'RUNNING', progress: state.progress / 100 };
      case 'failed':
        return { ...base, status: 'FAILED', failure: 'An unexpected error occurred.', failureCode: 'INTERNAL.BAD_OUTPUT.CODE01' };
      case 'moderated':
        return { ...base, status: 'FAILED', failure: 'The output did not pass moderation.', failureCode: 'SAFETY.OUTPUT.VIDEO' };
      case 'succeeded':
        return { ...base, status: 'SUCCEEDED', output: task.plan.output === 'missing' ? [] : [http.fileUrl(task, 'output.mp4')] };
    }
  }

  function create(req: FakeRequest, fromImage: boolean): Answer {
    const fault = authFault(req);
    if (fault) return fault;
    if (!isRecord(req.json)) return error(400, 'Invalid JSON body.');
    const problem = invalid(req.json, fromImage);
    if (problem) return error(400, problem);
    const prompt = typeof req.json['promptText'] === 'string' ? req.json['promptText'] : '';
    const plan = book.planFor(prompt, req.json);
    if (plan.refuse === 'invalid') return error(400, 'Invalid request.');
    if (plan.refuse === 'rate-limit' || plan.refuse === 'quota') return error(429, 'You have exceeded your rate limit.');
    const task = book.create(prompt, req.json, plan);
    http.stats.accept(task);
    return plan.loseAnswer ? 'lose' : { status: 200, json: { id: task.id } };
  }

  function get(req: FakeRequest, id: string): Answer {
    const fault = authFault(req);
    if (fault) return fault;
    const task = book.get(id);
    if (!task || deleted.has(id)) return error(404, 'Task not found.');
    return { status: 200, json: taskJson(task) };
  }

  function remove(req: FakeRequest, id: string): Answer {
    const fault = authFault(req);
    if (fault) return fault;
    const task = book.get(id);
    if (!task || deleted.has(id)) return error(404, 'Task not found.');
    book.cancel(task);
    deleted.add(id);
    return { status: 204 };
  }

  function route(req: FakeRequest): Route | undefined {
    const path = req.url.pathname;
    if (req.method === 'POST' && path === '/v1/image_to_video') return { role: 'submit', answer: () => create(req, true) };
    if (req.method === 'POST' && path === '/v1/text_to_video') return { role: 'submit', answer: () => create(req, false) };
    const task = /^\/v1\/tasks\/([A-Za-z0-9-]+)$/.exec(path);
    if (task?.[1] !== undefined) {
      const id = task[1];
      if (req.method === 'GET') return { role: 'poll', answer: () => get(req, id) };
      if (req.method === 'DELETE') return { role: 'cancel', answer: () => remove(req, id) };
    }
    if (req.method === 'GET' && path === '/v1/organization')
      return {
        role: 'other',
        answer: () => authFault(req) ?? { status: 200, json: { creditBalance: 1000, tier: { maxMonthlyCreditSpend: 10000, models: {} } } },
      };
    return undefined;
  }

  const http = new FakeHttp(book, route, () => error(404, 'Not found.'));
  await http.listen();
  return {
    get origin() {
      return http.origin;
    },
    book,
    http,
    acceptedByPrompt: http.stats.acceptedByPrompt,
    deleted,
    close: () => http.close(),
  };
}

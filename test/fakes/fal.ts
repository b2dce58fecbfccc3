import { FakeHttp, TaskBook, bearer, isRecord, type Answer, type FakeRequest, type FakeTask, type KitOptions, type Reply, type Route } from './upstream-kit.js';

/**
 * A fake fal queue (docs/channels.md#protocol-fal; https://docs.fal.ai/model-apis/model-endpoints/queue), the fake's origin
 * standing for `https://queue.fal.run`:
 * - `POST /{endpoint id}` with `Authorization: Key ...` and the model input as the body
 *   -> `{request_id, response_url, status_url, cancel_url, queue_position, status:"IN_QUEUE"}`;
 *   the URLs use the endpoint's app only, never the subpath: `owner/alias`, or
 *   `namespace/owner/alias` for the `workflows` and `comfy` namespaces (as fal's client derives it).
 *   Status, result and cancel answer only under that app.
 * - the endpoints of INPUT_SCHEMAS are validated as their published input schemas say, the way
 *   fal's validation answers: 422 `{detail:[{loc:["body", field], msg, type}]}` (an integer
 *   `duration` where Kling takes the string "5" or "10" is refused); fields a schema does not
 *   declare are ignored, and recorded in `ignoredFields`.
 * - `GET /{owner}/{app}/requests/{id}/status[?logs=1]`: HTTP 202 while IN_QUEUE / IN_PROGRESS,
 *   200 once COMPLETED. There is no FAILED: a failed job is COMPLETED and its error shows when
 *   the result is fetched.
 * - `GET /{owner}/{app}/requests/{id}`: the result (`{video:{url,...}}` or `{images:[...]}`), or
 *   422 `{detail:[{loc,msg,type}]}` (validation, and `content_policy_violation` for moderation),
 *   or 504 `{detail, error_type}` with `X-Fal-Error-Type` (infrastructure failure).
 * - `PUT /{owner}/{app}/requests/{id}/cancel`: 202 CANCELLATION_REQUESTED, 400 ALREADY_COMPLETED,
 *   404 NOT_FOUND.
 * The queue never refuses for concurrency (it queues); an exhausted balance is a 403 at submit.
 */

type Check = (value: unknown) => string | undefined;
const str: Check = (v) => (typeof v === 'string' ? undefined : 'Input should be a valid string');
const oneOf =
  (...values: unknown[]): Check =>
  (v) =>
    values.includes(v) ? undefined : `Input should be ${values.map((x) => JSON.stringify(x)).join(' or ')}`;
const int =
  (min = -Infinity, max = Infinity): Check =>
  (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? undefined : `Input should be an integer from ${min} to ${max}`;
const num: Check = (v) => (typeof v === 'number' ? undefined : 'Input should be a valid number');
const bool: Check = (v) => (typeof v === 'boolean' ? undefined : 'Input should be a valid boolean');
const imageSize: Check = (v) =>
  typeof v === 'string' || (isRecord(v) && Number.isInteger(v['width']) && Number.isInteger(v['height']))
    ? undefined
    : 'Input should be a size name or {width, height}';

/**
 * Published input schemas of the endpoints the docs use (required fields, then optional ones), as
 * each endpoint's API page (https://fal.ai/models/{endpoint id}/api) and queue OpenAPI document
 * (https://fal.ai/api/openapi/queue/openapi.json?endpoint_id={endpoint id}; two real ones are in
 * test/fixtures/upstream/) give them.
 */
const KLING_I2V = {
  required: { prompt: str, image_url: str },
  optional: { duration: oneOf('5', '10'), negative_prompt: str, cfg_scale: num },
};
export const INPUT_SCHEMAS: Readonly<Record<string, { required: Record<string, Check>; optional: Record<string, Check> }>> = {
  'fal-ai/kling-video/v2.1/pro/image-to-video': { ...KLING_I2V, optional: { ...KLING_I2V.optional, tail_image_url: str } },
  'fal-ai/kling-video/v2.1/standard/image-to-video': KLING_I2V,
  'fal-ai/flux/dev': {
    required: { prompt: str },
    optional: {
      image_size: imageSize,
      num_inference_steps: int(1, 50),
      seed: int(),
      guidance_scale: num,
      num_images: int(1, 4),
      enable_safety_checker: bool,
      output_format: oneOf('jpeg', 'png'),
    },
  },
};

/** The app of an endpoint id, as fal's client derives it. */
export function falApp(path: string): string {
  const segments = path.split('/').filter(Boolean);
  return segments.slice(0, ['workflows', 'comfy'].includes(segments[0] ?? '') ? 3 : 2).join('/');
}

export interface FalFake {
  readonly origin: string;
  readonly book: TaskBook;
  readonly http: FakeHttp;
  /** Accepted submissions per prompt (see FakeStats.acceptedByPrompt). */
  readonly acceptedByPrompt: ReadonlyMap<string, number>;
  /** The path each request was submitted on (owner/app/subpath). */
  pathOf(requestId: string): string | undefined;
  /** Input fields a known endpoint's schema does not declare (fal ignores them), per request id. */
  readonly ignoredFields: Map<string, string[]>;
  close(): Promise<void>;
}

export async function startFalFake(options: KitOptions = {}): Promise<FalFake> {
  const book = new TaskBook(options, 'mp4');
  const apiKey = options.apiKey ?? 'fal-test-key';
  const ignoredFields = new Map<string, string[]>();

  /** The schema's verdict on an input: a 422 answer, or the fields it ignores. */
  function validate(path: string, body: Record<string, unknown>): Reply | string[] {
    const schema = INPUT_SCHEMAS[path];
    if (!schema) return [];
    const detail: { loc: string[]; msg: string; type: string }[] = [];
    for (const [field, check] of Object.entries(schema.required)) {
      if (body[field] === undefined) detail.push({ loc: ['body', field], msg: 'Field required', type: 'missing' });
      else {
        const msg = check(body[field]);
        if (msg) detail.push({ loc: ['body', field], msg, type: 'value_error' });
      }
    }
    for (const [field, check] of Object.entries(schema.optional)) {
      const msg = body[field] === undefined ? undefined : check(body[field]);
      if (msg) detail.push({ loc: ['body', field], msg, type: field === 'duration' ? 'enum' : 'value_error' });
    }
    if (detail.length > 0) return { status: 422, json: { detail } };
    return Object.keys(body).filter((field) => !(field in schema.required) && !(field in schema.optional));
  }

  const detail = (status: number, text: string, errorType?: string): Reply => ({
    status,
    json: errorType ? { detail: text, error_type: errorType } : { detail: text },
    headers: errorType ? { 'x-fal-error-type': errorType } : {},
  });

  const urls = (app: string, id: string): Record<string, string> => ({
    response_url: `${http.origin}/${app}/requests/${id}`,
    status_url: `${http.origin}/${app}/requests/${id}/status`,
    cancel_url: `${http.origin}/${app}/requests/${id}/cancel`,
  });

  function submit(req: FakeRequest, path: string): Answer {
    if (bearer(req, 'Key') !== apiKey) return detail(401, 'Unauthorized');
    const body = req.json;
    if (!isRecord(body)) return detail(422, 'Input should be a valid dictionary');
    const verdict = validate(path, body);
    if (!Array.isArray(verdict)) return verdict;
    const prompt = typeof body['prompt'] === 'string' ? body['prompt'] : '';
    const plan = book.planFor(prompt, body);
    if (plan.refuse === 'quota') return detail(403, 'User is locked. Reason: Exhausted balance. Top up your balance at fal.ai/dashboard/billing.');
    const app = falApp(path);
    const output = /flux|sdxl|text-to-image/.test(path) && plan.output === 'mp4' ? 'png' : plan.output;
    const task = book.create(prompt, body, { ...plan, output }, { path, app });
    if (verdict.length > 0) ignoredFields.set(task.id, verdict);
    http.stats.accept(task);
    if (plan.loseAnswer) return 'lose';
    return { status: 200, json: { request_id: task.id, ...urls(app, task.id), queue_position: 0, status: 'IN_QUEUE' } };
  }

  function find(req: FakeRequest, app: string, id: string): FakeTask | Reply {
    if (bearer(req, 'Key') !== apiKey) return detail(401, 'Unauthorized');
    const task = book.get(id);
    if (!task || task.meta['app'] !== app) return detail(404, 'Request not found');
    return task;
  }

  function status(req: FakeRequest, app: string, id: string): Answer {
    const task = find(req, app, id);
    if ('status' in task) return task;
    const state = book.state(task);
    const logs =
      req.url.searchParams.get('logs') === '1'
        ? [{ message: `step ${state.progress}%`, level: 'INFO', timestamp: new Date(book.clock()).toISOString() }]
        : undefined;
    if (state.phase === 'queued') return { status: 202, json: { status: 'IN_QUEUE', queue_position: 3, response_url: urls(app, id)['response_url'] } };
    if (state.phase === 'running')
      return { status: 202, json: { status: 'IN_PROGRESS', response_url: urls(app, id)['response_url'], ...(logs ? { logs } : {}) } };
    return {
      status: 200,
      json: {
        status: 'COMPLETED',
        response_url: urls(app, id)['response_url'],
        ...(logs ? { logs } : {}),
        metrics: { inference_time: task.plan.runMs / 1000 },
      },
    };
  }

  function result(req: FakeRequest, app: string, id: string): Answer {
    const task = find(req, app, id);
    if ('status' in task) return task;
    const state = book.state(task);
    switch (state.phase) {
      case 'queued':
      case 'running':
        return detail(400, 'Request is still in progress');
      case 'cancelled':
        return detail(400, 'Request was cancelled', 'request_cancelled');
      case 'failed':
        return detail(504, 'Request timed out', 'request_timeout');
      case 'moderated':
        return {
          status: 422,
          json: {
            detail: [
              {
                loc: ['body', 'prompt'],
                msg: 'The content could not be processed because it contained material flagged by a content checker.',
                type: 'content_policy_violation',
              },
            ],
          },
        };
      case 'succeeded':
        break;
    }
    if (task.plan.refuse === 'invalid' || task.plan.refuse === 'moderation') {
      const type = task.plan.refuse === 'moderation' ? 'content_policy_violation' : 'value_error';
      return { status: 422, json: { detail: [{ loc: ['body', 'image_url'], msg: 'invalid input', type }] } };
    }
    if (task.plan.output === 'png') {
      return { status: 200, json: { images: [{ url: http.fileUrl(task, 'output.png'), content_type: 'image/png', width: 16, height: 16 }], seed: 42 } };
    }
    return {
      status: 200,
      json: { video: { url: http.fileUrl(task, 'output.mp4'), content_type: 'video/mp4', file_name: 'output.mp4', file_size: 1766 }, seed: 42 },
    };
  }

  function cancel(req: FakeRequest, app: string, id: string): Answer {
    if (bearer(req, 'Key') !== apiKey) return detail(401, 'Unauthorized');
    const task = book.get(id);
    if (!task || task.meta['app'] !== app) return { status: 404, json: { status: 'NOT_FOUND' } };
    return book.cancel(task) ? { status: 202, json: { status: 'CANCELLATION_REQUESTED' } } : { status: 400, json: { status: 'ALREADY_COMPLETED' } };
  }

  function route(req: FakeRequest): Route | undefined {
    const path = req.url.pathname.replace(/^\/+/, '');
    const request = /^((?:workflows\/|comfy\/)?[^/]+\/[^/]+)\/requests\/([^/]+)(\/status|\/cancel)?$/.exec(path);
    if (request) {
      const [, app = '', id = '', tail] = request;
      if (req.method === 'GET' && tail === '/status') return { role: 'poll', answer: () => status(req, app, id) };
      if (req.method === 'GET' && tail === undefined) return { role: 'poll', answer: () => result(req, app, id) };
      if (req.method === 'PUT' && tail === '/cancel') return { role: 'cancel', answer: () => cancel(req, app, id) };
      return undefined;
    }
    if (req.method === 'POST' && path.split('/').length >= 2) return { role: 'submit', answer: () => submit(req, path) };
    return undefined;
  }

  const http = new FakeHttp(book, route, () => detail(404, 'Not Found'));
  await http.listen();
  return {
    get origin() {
      return http.origin;
    },
    book,
    http,
    acceptedByPrompt: http.stats.acceptedByPrompt,
    pathOf: (id) => book.get(id)?.meta['path'],
    ignoredFields,
    close: () => http.close(),
  };
}

import { randomBytes } from 'node:crypto';
import { FakeHttp, TaskBook, bearer, isRecord, type Answer, type FakeRequest, type FakeTask, type KitOptions, type Reply, type Route } from './upstream-kit.js';

/**
 * A fake Replicate predictions API (docs/channels.md#protocol-replicate; https://replicate.com/docs/reference/http):
 * - `POST /v1/models/{owner}/{name}/predictions` `{input}` or `POST /v1/predictions`
 *   `{version, input}`, bearer auth -> 201 prediction `{id, status:"starting", urls:{get,cancel}}`.
 * - `GET /v1/predictions/{id}`: starting -> processing (tqdm-style `logs`) -> succeeded (`output`
 *   a URL for videos, an array of URLs for images) | failed (`error`, e.g. the NSFW checker) |
 *   canceled; `aborted` can be forced. After `outputTtlMs` the prediction reads
 *   `data_removed: true` with `output: null` (API predictions are deleted after an hour).
 * - `POST /v1/predictions/{id}/cancel`; `GET /v1/account` (for probes); `GET /v1/models/{owner}/{name}`
 *   with the model's input schema (MODEL_SCHEMAS), which also validates its predictions.
 * - errors: 401 problem JSON, 422 input validation, 402 insufficient credit, 429
 *   `{"detail":"Request was throttled. ..."}`, 404 `{"detail":"Not found."}`.
 */

/** One input of a published schema: its type, and its enum or bounds. */
interface InputSpec {
  readonly type: 'string' | 'integer' | 'boolean';
  readonly enum?: readonly (string | number)[];
  readonly minimum?: number;
  readonly maximum?: number;
}

function refusal(spec: InputSpec, value: unknown): string | undefined {
  if (spec.enum)
    return spec.enum.includes(value as string | number) ? undefined : `must be one of the following: ${spec.enum.map((x) => JSON.stringify(x)).join(', ')}`;
  if (spec.type === 'string') return typeof value === 'string' ? undefined : 'must be a string';
  if (spec.type === 'boolean') return typeof value === 'boolean' ? undefined : 'must be a boolean';
  if (typeof value !== 'number' || !Number.isInteger(value)) return 'must be an integer';
  if ((spec.minimum !== undefined && value < spec.minimum) || (spec.maximum !== undefined && value > spec.maximum))
    return `must be from ${spec.minimum ?? '-inf'} to ${spec.maximum ?? 'inf'}`;
  return undefined;
}

/**
 * The published input schemas (`GET /v1/models/{owner}/{name}` -> `latest_version.openapi_schema`
 * `components.schemas.Input`) of the models the docs use: flux-schnell
 * (https://replicate.com/black-forest-labs/flux-schnell/api/schema) and kling-v2.1
 * (https://replicate.com/kwaivgi/kling-v2.1/api/schema). Replicate answers 422 for a value the
 * schema refuses and ignores inputs it does not declare (recorded in `ignoredInputs`).
 */
export const MODEL_SCHEMAS: Readonly<Record<string, { required: readonly string[]; properties: Readonly<Record<string, InputSpec>> }>> = {
  'black-forest-labs/flux-schnell': {
    required: ['prompt'],
    properties: {
      prompt: { type: 'string' },
      aspect_ratio: { type: 'string', enum: ['1:1', '16:9', '21:9', '3:2', '2:3', '4:5', '5:4', '3:4', '4:3', '9:16', '9:21'] },
      num_outputs: { type: 'integer', minimum: 1, maximum: 4 },
      num_inference_steps: { type: 'integer', minimum: 1, maximum: 4 },
      seed: { type: 'integer' },
      output_format: { type: 'string', enum: ['webp', 'jpg', 'png'] },
      output_quality: { type: 'integer', minimum: 0, maximum: 100 },
      disable_safety_checker: { type: 'boolean' },
      go_fast: { type: 'boolean' },
      megapixels: { type: 'string', enum: ['1', '0.25'] },
    },
  },
  'kwaivgi/kling-v2.1': {
    required: ['prompt', 'start_image'],
    properties: {
      prompt: { type: 'string' },
      start_image: { type: 'string' },
      end_image: { type: 'string' },
      mode: { type: 'string', enum: ['standard', 'pro'] },
      duration: { type: 'integer', enum: [5, 10] },
      negative_prompt: { type: 'string' },
    },
  },
};

/**
 * A model version's `openapi_schema` in the shape cog publishes it (the real flux-schnell one is
 * test/fixtures/upstream/replicate-openapi-flux-schnell.json): `components.schemas.Input` with
 * `title`/`x-order` per property, and every enum a named schema of its own behind
 * `allOf: [{$ref}]` ("An enumeration.").
 */
function cogOpenApi(schema: { required: readonly string[]; properties: Readonly<Record<string, InputSpec>> }): Record<string, unknown> {
  const named: Record<string, unknown> = {};
  const properties: Record<string, unknown> = {};
  Object.entries(schema.properties).forEach(([name, spec], order) => {
    if (spec.enum) {
      named[name] = { enum: spec.enum, type: spec.type, title: name, description: 'An enumeration.' };
      properties[name] = { allOf: [{ $ref: `#/components/schemas/${name}` }], 'x-order': order };
      return;
    }
    const bounds = { ...(spec.minimum !== undefined ? { minimum: spec.minimum } : {}), ...(spec.maximum !== undefined ? { maximum: spec.maximum } : {}) };
    properties[name] = {
      type: spec.type,
      title: name.replace(/(^|_)(\w)/g, (_m, sep: string, c: string) => `${sep ? ' ' : ''}${c.toUpperCase()}`),
      ...bounds,
      'x-order': order,
    };
  });
  const input = { type: 'object', title: 'Input', required: schema.required, properties };
  return { openapi: '3.0.2', info: { title: 'Cog', version: '0.1.0' }, components: { schemas: { Input: input, ...named } } };
}

export interface ReplicateFake {
  readonly origin: string;
  readonly book: TaskBook;
  readonly http: FakeHttp;
  /** Accepted submissions per prompt (see FakeStats.acceptedByPrompt). */
  readonly acceptedByPrompt: ReadonlyMap<string, number>;
  /** The model path or version each prediction was created with. */
  modelOf(id: string): string | undefined;
  /** Inputs a known model's schema does not declare (Replicate ignores them), per prediction id. */
  readonly ignoredInputs: Map<string, string[]>;
  /** Make a prediction report this status word from now on (aborted, or words we do not know). */
  forceStatus(id: string, word: string): void;
  close(): Promise<void>;
}

export async function startReplicateFake(options: KitOptions = {}): Promise<ReplicateFake> {
  const book = new TaskBook(options, 'mp4', () => randomBytes(13).toString('hex').slice(0, 26));
  const apiKey = options.apiKey ?? 'r8_test_key';
  const forced = new Map<string, string>();
  const ignoredInputs = new Map<string, string[]>();

  const problem = (status: number, title: string, detail: string): Reply => ({
    status,
    json: { title, detail, status },
    headers: { 'content-type': 'application/problem+json' },
  });

  function validate(model: string | undefined, input: Record<string, unknown>): Reply | string[] {
    const schema = model === undefined ? undefined : MODEL_SCHEMAS[model];
    if (!schema) return [];
    const problems: string[] = [];
    for (const field of schema.required) if (input[field] === undefined) problems.push(`- input: ${field} is required`);
    for (const [field, spec] of Object.entries(schema.properties)) {
      const msg = input[field] === undefined ? undefined : refusal(spec, input[field]);
      if (msg) problems.push(`- input.${field}: ${field} ${msg}`);
    }
    if (model === 'kwaivgi/kling-v2.1' && input['end_image'] !== undefined && input['mode'] !== 'pro')
      problems.push('- input.end_image: end_image requires mode "pro"');
    if (problems.length > 0) return problem(422, 'Input validation failed', problems.join('\n'));
    return Object.keys(input).filter((field) => !(field in schema.properties));
  }

  function prediction(task: FakeTask): Record<string, unknown> {
    const state = book.state(task);
    const id = task.id;
    const body = isRecord(task.body) ? task.body : {};
    const words = { queued: 'starting', running: 'processing', succeeded: 'succeeded', failed: 'failed', moderated: 'failed', cancelled: 'canceled' } as const;
    const status = forced.get(id) ?? words[state.phase];
    const removed = state.endedAt !== undefined && book.clock() > state.endedAt + task.plan.outputTtlMs;
    let output: unknown = null;
    if (state.phase === 'succeeded' && !removed) output = task.plan.output === 'png' ? [http.fileUrl(task, 'out-0.png')] : http.fileUrl(task, 'output.mp4');
    const error =
      state.phase === 'moderated'
        ? 'NSFW content detected. Try running it again, or try a different prompt.'
        : state.phase === 'failed'
          ? 'CUDA out of memory'
          : null;
    const logs =
      state.phase === 'queued' ? '' : `${String(state.progress).padStart(3)}%|${'#'.repeat(Math.floor(state.progress / 10))}| ${state.progress}/100\n`;
    return {
      id,
      model: task.meta['model'],
      version: task.meta['version'] ?? 'dp-4d0c2b9f',
      input: body['input'],
      logs,
      output,
      data_removed: removed,
      error,
      status,
      created_at: new Date(task.createdAt).toISOString(),
      started_at: state.phase === 'queued' ? null : new Date(task.createdAt + task.plan.queuedMs).toISOString(),
      completed_at: state.endedAt === undefined ? null : new Date(state.endedAt).toISOString(),
      urls: { get: `${http.origin}/v1/predictions/${id}`, cancel: `${http.origin}/v1/predictions/${id}/cancel`, web: `https://replicate.com/p/${id}` },
      metrics: state.endedAt === undefined ? {} : { predict_time: task.plan.runMs / 1000 },
    };
  }

  function create(req: FakeRequest, model: string | undefined): Answer {
    if (bearer(req) !== apiKey) return problem(401, 'Unauthenticated', 'You did not pass a valid authentication token');
    const body = req.json;
    if (!isRecord(body) || !isRecord(body['input'])) return problem(422, 'Input validation failed', '- input: input is required');
    if (model === undefined && typeof body['version'] !== 'string') return problem(422, 'Invalid version or not permitted', 'version is required');
    const input = body['input'];
    const verdict = validate(model, input);
    if (!Array.isArray(verdict)) return verdict;
    const prompt = typeof input['prompt'] === 'string' ? input['prompt'] : '';
    let plan = book.planFor(prompt, body);
    switch (plan.refuse) {
      case 'invalid':
        return problem(422, 'Input validation failed', '- input.duration: duration must be one of the following: 5, 10');
      case 'quota':
        return problem(
          402,
          'Insufficient credit',
          'You have insufficient credit to run this model. Go to https://replicate.com/account/billing#billing to purchase credit.',
        );
      case 'rate-limit':
        return { status: 429, json: { detail: 'Request was throttled. Your rate limit resets in ~30s.' } };
      // The safety checker refuses at once, as a failed prediction.
      case 'moderation':
        plan = { ...plan, outcome: 'moderation', queuedMs: 0, runMs: 0 };
        break;
      case 'none':
        break;
    }
    const output = /flux|sdxl|image/.test(model ?? '') && plan.output === 'mp4' ? 'png' : plan.output;
    const meta: Record<string, string> = model === undefined ? { version: String(body['version']) } : { model };
    const task = book.create(prompt, body, { ...plan, output }, meta);
    if (verdict.length > 0) ignoredInputs.set(task.id, verdict);
    http.stats.accept(task);
    return plan.loseAnswer ? 'lose' : { status: 201, json: prediction(task) };
  }

  function get(req: FakeRequest, id: string): Answer {
    if (bearer(req) !== apiKey) return problem(401, 'Unauthenticated', 'You did not pass a valid authentication token');
    const task = book.get(id);
    return task ? { status: 200, json: prediction(task) } : { status: 404, json: { detail: 'Not found.' } };
  }

  function cancel(req: FakeRequest, id: string): Answer {
    if (bearer(req) !== apiKey) return problem(401, 'Unauthenticated', 'You did not pass a valid authentication token');
    const task = book.get(id);
    if (!task) return { status: 404, json: { detail: 'Not found.' } };
    book.cancel(task);
    // Replicate answers the prediction either way; a finished one keeps its status.
    return { status: 200, json: prediction(task) };
  }

  function route(req: FakeRequest): Route | undefined {
    const path = req.url.pathname;
    const byModel = /^\/v1\/models\/([^/]+\/[^/]+)\/predictions$/.exec(path);
    if (req.method === 'POST' && byModel) return { role: 'submit', answer: () => create(req, byModel[1]) };
    if (req.method === 'POST' && path === '/v1/predictions') return { role: 'submit', answer: () => create(req, undefined) };
    const one = /^\/v1\/predictions\/([^/]+)(\/cancel)?$/.exec(path);
    const id = one?.[1];
    if (id !== undefined && req.method === 'GET' && one?.[2] === undefined) return { role: 'poll', answer: () => get(req, id) };
    if (id !== undefined && req.method === 'POST' && one?.[2] === '/cancel') return { role: 'cancel', answer: () => cancel(req, id) };
    const modelInfo = /^\/v1\/models\/([^/]+\/[^/]+)(?:\/versions\/[^/]+)?$/.exec(path);
    if (req.method === 'GET' && modelInfo?.[1] !== undefined) {
      const name = modelInfo[1];
      return {
        role: 'other',
        answer: (): Reply => {
          if (bearer(req) !== apiKey) return problem(401, 'Unauthenticated', 'You did not pass a valid authentication token');
          const schema = MODEL_SCHEMAS[name];
          if (!schema) return { status: 404, json: { detail: 'Not found.' } };
          const openapi = cogOpenApi(schema);
          // A version answers its own schema; the model answers its latest version's.
          if (path.includes('/versions/')) return { status: 200, json: { id: path.split('/').pop(), openapi_schema: openapi } };
          return { status: 200, json: { owner: name.split('/')[0], name: name.split('/')[1], latest_version: { id: 'v1', openapi_schema: openapi } } };
        },
      };
    }
    if (req.method === 'GET' && path === '/v1/account') {
      return {
        role: 'other',
        answer: () =>
          bearer(req) === apiKey
            ? { status: 200, json: { type: 'user', username: 'tester' } }
            : problem(401, 'Unauthenticated', 'You did not pass a valid authentication token'),
      };
    }
    return undefined;
  }

  const http = new FakeHttp(book, route, () => ({ status: 404, json: { detail: 'Not found.' } }));
  await http.listen();
  return {
    get origin() {
      return http.origin;
    },
    book,
    http,
    acceptedByPrompt: http.stats.acceptedByPrompt,
    modelOf: (id) => book.get(id)?.meta['model'] ?? book.get(id)?.meta['version'],
    ignoredInputs,
    forceStatus: (id, word) => void forced.set(id, word),
    close: () => http.close(),
  };
}

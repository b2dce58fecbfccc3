import { randomUUID } from 'node:crypto';
import { FakeHttp, isRecord, TaskBook, bearer, type Answer, type FakeRequest, type FakeTask, type KitOptions, type Reply, type Route } from './upstream-kit.js';

/**
 * A fake of xAI's video API (docs/channels.md#protocol-xai; https://docs.x.ai/docs/guides/video-generation;
 * statuses and the video's fields as xAI's SDK defines them, https://github.com/xai-org/xai-sdk-python
 * xai-sdk-python/src/xai_sdk/proto/v6/video_pb2.pyi and deferred_pb2.pyi):
 * - `Authorization: Bearer <key>`; anything else is 401 `{code, error}`.
 * - `POST /v1/videos/generations` -> `{request_id}`. Refuses with 400 what the docs refuse: a
 *   model other than grok-imagine-video, `duration` outside 1..15, an unknown `aspect_ratio` or
 *   `resolution`, an `image` that is not `{url}`, and fields it does not know.
 * - `GET /v1/videos/{request_id}`: HTTP 202 with no body while queued and `{status: "pending",
 *   progress}` while running; `{status: "done", video: {url, duration, respect_moderation},
 *   usage: {cost_in_usd_ticks}}`; `{status: "failed", error}`; a moderated video is done with `respect_moderation: false`.
 * - `GET /v1/api-key` (probes). Markers follow upstream-kit.ts; moderation-early is a 400 whose
 *   message speaks of moderation; rate-limit and quota are 429.
 */

export interface XaiFake {
  readonly origin: string;
  readonly book: TaskBook;
  readonly http: FakeHttp;
  readonly acceptedByPrompt: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

const FIELDS = new Set(['model', 'prompt', 'duration', 'aspect_ratio', 'resolution', 'image']);

export async function startXaiFake(options: KitOptions = {}): Promise<XaiFake> {
  const book = new TaskBook(options, 'mp4', randomUUID);
  const apiKey = options.apiKey ?? 'xai-test-key';
  const error = (status: number, message: string): Reply => ({
    status,
    json: { code: status === 400 ? 'Client specified an invalid argument' : 'error', error: message },
  });

  function invalid(body: Record<string, unknown>): string | undefined {
    for (const key of Object.keys(body)) if (!FIELDS.has(key)) return `Unknown field: ${key}`;
    if (body['model'] !== 'grok-imagine-video') return `Model ${String(body['model'])} does not exist`;
    const duration = body['duration'];
    if (duration !== undefined && (typeof duration !== 'number' || !Number.isInteger(duration) || duration < 1 || duration > 15))
      return 'duration must be 1 to 15';
    if (body['resolution'] !== undefined && !['480p', '720p', '1080p'].some((r) => r === body['resolution'])) return 'resolution is invalid';
    if (body['aspect_ratio'] !== undefined && !['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3'].some((r) => r === body['aspect_ratio']))
      return 'aspect_ratio is invalid';
    const image = body['image'];
    if (image !== undefined && (!isRecord(image) || typeof image['url'] !== 'string' || !/^(https?:|data:image\/)/.test(image['url'])))
      return 'image must be {url}';
    return undefined;
  }

  function status(task: FakeTask): Reply {
    const state = book.state(task);
    switch (state.phase) {
      case 'queued':
      case 'cancelled':
        return { status: 202 };
      case 'running':
        return { status: 202, json: { status: 'pending', progress: state.progress } };
      case 'failed':
        return { status: 200, json: { status: 'failed', error: { code: 'internal', message: 'Video generation failed' } } };
      case 'moderated':
        return {
          status: 200,
          json: { status: 'done', video: { url: http.fileUrl(task, 'video.mp4'), duration: 5, respect_moderation: false }, model: 'grok-imagine-video' },
        };
      case 'succeeded':
        return task.plan.output === 'missing'
          ? { status: 200, json: { status: 'done', video: null } }
          : {
              status: 200,
              // $0.05 a second at 480p, in xAI's ticks (1 USD = 10^10).
              json: {
                status: 'done',
                video: { url: http.fileUrl(task, 'video.mp4'), duration: 5, respect_moderation: true },
                model: 'grok-imagine-video',
                usage: { cost_in_usd_ticks: 5 * 500_000_000 },
              },
            };
    }
  }

  function create(req: FakeRequest): Answer {
    if (bearer(req) !== apiKey) return error(401, 'Incorrect API key provided');
    if (!isRecord(req.json)) return error(400, 'Invalid JSON');
    const problem = invalid(req.json);
    if (problem) return error(400, problem);
    const prompt = typeof req.json['prompt'] === 'string' ? req.json['prompt'] : '';
    const plan = book.planFor(prompt, req.json);
    switch (plan.refuse) {
      case 'moderation':
        return error(400, 'Generated prompt was rejected by content moderation');
      case 'invalid':
        return error(400, 'Invalid request');
      case 'rate-limit':
      case 'quota':
        return error(429, 'Rate limit exceeded');
      case 'none':
        break;
    }
    const task = book.create(prompt, req.json, plan);
    http.stats.accept(task);
    return plan.loseAnswer ? 'lose' : { status: 200, json: { request_id: task.id } };
  }

  function route(req: FakeRequest): Route | undefined {
    const path = req.url.pathname;
    if (req.method === 'POST' && path === '/v1/videos/generations') return { role: 'submit', answer: () => create(req) };
    if (req.method === 'GET' && path === '/v1/api-key')
      return {
        role: 'other',
        answer: () =>
          bearer(req) === apiKey ? { status: 200, json: { api_key_blocked: false, team_blocked: false } } : error(401, 'Incorrect API key provided'),
      };
    const one = /^\/v1\/videos\/([A-Za-z0-9-]+)$/.exec(path);
    if (req.method === 'GET' && one?.[1] !== undefined) {
      const id = one[1];
      return {
        role: 'poll',
        answer: () => {
          if (bearer(req) !== apiKey) return error(401, 'Incorrect API key provided');
          const task = book.get(id);
          return task ? status(task) : error(404, 'Request not found');
        },
      };
    }
    return undefined;
  }

  const http = new FakeHttp(book, route, () => error(404, 'Not found'));
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

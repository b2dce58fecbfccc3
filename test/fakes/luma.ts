import { randomUUID } from 'node:crypto';
import { FakeHttp, isRecord, TaskBook, bearer, type Answer, type FakeRequest, type FakeTask, type KitOptions, type Reply, type Route } from './upstream-kit.js';

/**
 * A fake of Luma's Dream Machine API (docs/channels.md#protocol-luma; https://docs.lumalabs.ai/docs/video-generation;
 * lumalabs/lumaai-node lumaai-node/src/resources/generations/generations.ts, lumaai-node/src/resources/credits.ts):
 * - `Authorization: Bearer <key>`; anything else is 401 `{detail}`.
 * - `POST /dream-machine/v1/generations/video` -> a Generation `{id, state: "queued", ...}`.
 *   Refuses with 400 `{detail}` what the SDK's `GenerationRequest` does not allow: a model other
 *   than ray-2 / ray-flash-2, `duration` other than "5s" / "9s", `resolution` other than 540p,
 *   720p, 1080p, 4k, an unknown `aspect_ratio`, a keyframe that is not `{type: "image", url}`
 *   with an http(s) URL (no data URIs), and fields it does not know.
 * - `GET /dream-machine/v1/generations/{id}`: `state` queued, dreaming, completed (`assets.video`),
 *   failed (`failure_reason`). `GET /dream-machine/v1/credits` (probes).
 * Markers follow upstream-kit.ts: moderation-early is a 400 whose detail speaks of moderation, a
 * moderated task fails with a moderation `failure_reason`; rate-limit and quota are 429.
 */

export interface LumaFake {
  readonly origin: string;
  readonly book: TaskBook;
  readonly http: FakeHttp;
  readonly acceptedByPrompt: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

const FIELDS = new Set(['model', 'prompt', 'generation_type', 'duration', 'resolution', 'aspect_ratio', 'keyframes', 'loop', 'callback_url', 'concepts']);
const RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4', '21:9', '9:21'];

export async function startLumaFake(options: KitOptions = {}): Promise<LumaFake> {
  const book = new TaskBook(options, 'mp4', randomUUID);
  const apiKey = options.apiKey ?? 'luma-test-key';
  const detail = (status: number, message: string): Reply => ({ status, json: { detail: message } });

  function invalid(body: Record<string, unknown>): string | undefined {
    for (const key of Object.keys(body)) if (!FIELDS.has(key)) return `Unknown field: ${key}`;
    if (body['model'] !== 'ray-2' && body['model'] !== 'ray-flash-2') return 'model must be ray-2 or ray-flash-2';
    if (body['duration'] !== undefined && body['duration'] !== '5s' && body['duration'] !== '9s') return 'duration must be 5s or 9s';
    if (body['resolution'] !== undefined && !['540p', '720p', '1080p', '4k'].some((r) => r === body['resolution'])) return 'resolution is invalid';
    if (body['aspect_ratio'] !== undefined && !RATIOS.some((r) => r === body['aspect_ratio'])) return 'aspect_ratio is invalid';
    const keyframes = body['keyframes'];
    if (keyframes !== undefined) {
      if (!isRecord(keyframes)) return 'keyframes must be an object';
      for (const [name, frame] of Object.entries(keyframes)) {
        if (name !== 'frame0' && name !== 'frame1') return `Unknown keyframe: ${name}`;
        if (!isRecord(frame) || frame['type'] !== 'image' || typeof frame['url'] !== 'string' || !/^https?:\/\//.test(frame['url']))
          return `${name} must be {type: image, url} with an http(s) URL`;
      }
    }
    return undefined;
  }

  function generation(task: FakeTask): Record<string, unknown> {
    const state = book.state(task);
    const base = {
      id: task.id,
      generation_type: 'video',
      created_at: new Date(task.createdAt).toISOString(),
      request: task.body,
      assets: null,
      failure_reason: null,
    };
    switch (state.phase) {
      case 'queued':
      case 'cancelled':
        return { ...base, state: 'queued' };
      case 'running':
        return { ...base, state: 'dreaming' };
      case 'failed':
        return { ...base, state: 'failed', failure_reason: 'Generation failed, please try again' };
      case 'moderated':
        return { ...base, state: 'failed', failure_reason: 'The output was blocked by moderation' };
      case 'succeeded':
        return { ...base, state: 'completed', assets: task.plan.output === 'missing' ? {} : { video: http.fileUrl(task, 'video.mp4') } };
    }
  }

  function create(req: FakeRequest): Answer {
    if (bearer(req) !== apiKey) return detail(401, 'Invalid authentication credentials');
    if (!isRecord(req.json)) return detail(400, 'Invalid JSON body');
    const problem = invalid(req.json);
    if (problem) return detail(400, problem);
    const prompt = typeof req.json['prompt'] === 'string' ? req.json['prompt'] : '';
    const plan = book.planFor(prompt, req.json);
    switch (plan.refuse) {
      case 'moderation':
        return detail(400, 'Prompt not allowed because advanced moderation failed');
      case 'invalid':
        return detail(400, 'Invalid request');
      case 'rate-limit':
      case 'quota':
        return detail(429, 'Too many requests');
      case 'none':
        break;
    }
    const task = book.create(prompt, req.json, plan);
    http.stats.accept(task);
    return plan.loseAnswer ? 'lose' : { status: 201, json: generation(task) };
  }

  function route(req: FakeRequest): Route | undefined {
    const path = req.url.pathname;
    if (req.method === 'POST' && path === '/dream-machine/v1/generations/video') return { role: 'submit', answer: () => create(req) };
    const one = /^\/dream-machine\/v1\/generations\/([A-Za-z0-9-]+)$/.exec(path);
    if (req.method === 'GET' && one?.[1] !== undefined) {
      const id = one[1];
      return {
        role: 'poll',
        answer: () => {
          if (bearer(req) !== apiKey) return detail(401, 'Invalid authentication credentials');
          const task = book.get(id);
          return task ? { status: 200, json: generation(task) } : detail(404, 'Generation not found');
        },
      };
    }
    if (req.method === 'GET' && path === '/dream-machine/v1/credits')
      return {
        role: 'other',
        answer: () => (bearer(req) === apiKey ? { status: 200, json: { credit_balance: 1000 } } : detail(401, 'Invalid authentication credentials')),
      };
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
    close: () => http.close(),
  };
}

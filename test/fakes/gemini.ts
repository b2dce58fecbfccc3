import { randomBytes } from 'node:crypto';
import { planRefusal, RAI_OUTPUT_REASON, rpc, veoRefusal } from './veo-kit.js';
import {
  FakeHttp,
  NOT_A_VIDEO,
  TaskBook,
  TINY_MP4,
  type Answer,
  type FakeRequest,
  type FakeTask,
  type KitOptions,
  type Reply,
  type Route,
} from './upstream-kit.js';

/**
 * A fake Gemini API for Veo (docs/channels.md#protocol-gemini; https://ai.google.dev/gemini-api/docs/video,
 * https://ai.google.dev/api/models#method:-models.predictlongrunning; googleapis/js-genai
 * js-genai/src/converters/_models_converters.ts and js-genai/src/node/_node_downloader.ts):
 * - `x-goog-api-key` on every call. A wrong key is HTTP 400 INVALID_ARGUMENT with an ErrorInfo
 *   `reason: API_KEY_INVALID` (the Gemini API's own answer); no key is 403 PERMISSION_DENIED.
 * - `POST /v1beta/models/{model}:predictLongRunning` -> `{name: "models/{model}/operations/{id}"}`;
 *   refuses what the Developer API refuses (veo-kit.ts: `seed`, `generateAudio`, `storageUri`
 *   and other Vertex-only parameters; values and limits of Veo 3.1).
 * - `GET /v1beta/models/{model}/operations/{id}` -> `{name}` while running (no `done`, no
 *   progress), then `{done: true, response: {generateVideoResponse: {generatedSamples:
 *   [{video: {uri}}]}}}`, or `{done: true, error: {code, message}}`, or (moderated) a response
 *   with only `raiMediaFilteredCount` and `raiMediaFilteredReasons`.
 * - `GET /v1beta/files/{id}:download?alt=media` needs the key (403 without), serves the MP4.
 * - `GET /v1beta/models/{model}` (probes). No cancel, no operation list.
 * Markers follow upstream-kit.ts; a rate-limited submit answers 429 with a RetryInfo of 7 s.
 */

export interface GeminiFake {
  readonly origin: string;
  readonly book: TaskBook;
  readonly http: FakeHttp;
  readonly acceptedByPrompt: ReadonlyMap<string, number>;
  /** The submitted body of an operation (by its id, the last part of the name). */
  bodyOf(operationId: string): unknown;
  /** Download requests that came without the key. */
  readonly keylessDownloads: { count: number };
  close(): Promise<void>;
}

export async function startGeminiFake(options: KitOptions = {}): Promise<GeminiFake> {
  const book = new TaskBook(options, 'mp4', () => randomBytes(8).toString('hex'));
  const apiKey = options.apiKey ?? 'gemini-test-key';
  const keylessDownloads = { count: 0 };

  function authFault(req: FakeRequest): Reply | undefined {
    const key = req.headers['x-goog-api-key'];
    if (key === undefined || key === '')
      return rpc(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity).");
    if (key !== apiKey)
      return rpc(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' },
      ]);
    return undefined;
  }

  function operation(task: FakeTask): Record<string, unknown> {
    const name = `models/${task.meta['model'] ?? ''}/operations/${task.id}`;
    const state = book.state(task);
    switch (state.phase) {
      case 'queued':
      case 'running':
      case 'cancelled':
        return { name };
      case 'failed':
        return { name, done: true, error: { code: 13, message: 'Video generation failed due to an internal error.' } };
      case 'moderated':
        return {
          name,
          done: true,
          response: {
            '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse',
            generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: [RAI_OUTPUT_REASON] },
          },
        };
      case 'succeeded': {
        const samples = task.plan.output === 'missing' ? [] : [{ video: { uri: `${http.origin}/v1beta/files/${task.id}:download?alt=media` } }];
        return {
          name,
          done: true,
          response: {
            '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse',
            generateVideoResponse: { generatedSamples: samples },
          },
        };
      }
    }
  }

  function create(req: FakeRequest, model: string): Answer {
    const fault = authFault(req);
    if (fault) return fault;
    const refusal = veoRefusal(req.json, false);
    if (refusal) return rpc(400, 'INVALID_ARGUMENT', refusal);
    const body = req.json as Record<string, unknown>;
    const instance = (body['instances'] as Record<string, unknown>[])[0] ?? {};
    const prompt = typeof instance['prompt'] === 'string' ? instance['prompt'] : '';
    const plan = book.planFor(prompt, body);
    const early = planRefusal(plan);
    if (early) return early;
    const task = book.create(prompt, body, plan, { model });
    http.stats.accept(task);
    return plan.loseAnswer ? 'lose' : { status: 200, json: { name: `models/${model}/operations/${task.id}` } };
  }

  function get(req: FakeRequest, id: string): Answer {
    const fault = authFault(req);
    if (fault) return fault;
    const task = book.get(id);
    return task ? { status: 200, json: operation(task) } : rpc(404, 'NOT_FOUND', `Operation not found: ${id}`);
  }

  function download(req: FakeRequest, id: string): Answer {
    if (req.headers['x-goog-api-key'] === undefined) keylessDownloads.count += 1;
    const fault = authFault(req);
    if (fault) return fault;
    const task = book.get(id);
    if (!task || book.state(task).phase !== 'succeeded' || req.url.searchParams.get('alt') !== 'media') return rpc(404, 'NOT_FOUND', 'File not found.');
    if (task.plan.output === 'not-media') return { status: 200, body: NOT_A_VIDEO, headers: { 'content-type': 'video/mp4' } };
    return { status: 200, body: TINY_MP4, headers: { 'content-type': 'video/mp4' } };
  }

  function route(req: FakeRequest): Route | undefined {
    const path = req.url.pathname;
    const submit = /^\/v1beta\/models\/([A-Za-z0-9._-]+):predictLongRunning$/.exec(path);
    if (req.method === 'POST' && submit?.[1] !== undefined) {
      const model = submit[1];
      return { role: 'submit', answer: () => create(req, model) };
    }
    const op = /^\/v1beta\/models\/[A-Za-z0-9._-]+\/operations\/([A-Za-z0-9._-]+)$/.exec(path);
    if (req.method === 'GET' && op?.[1] !== undefined) {
      const id = op[1];
      return { role: 'poll', answer: () => get(req, id) };
    }
    const file = /^\/v1beta\/files\/([a-z0-9]+):download$/.exec(path);
    if (req.method === 'GET' && file?.[1] !== undefined) {
      const id = file[1];
      return { role: 'file', answer: () => download(req, id) };
    }
    if (req.method === 'GET' && path === '/v1beta/models')
      return { role: 'other', answer: () => authFault(req) ?? { status: 200, json: { models: [{ name: 'models/veo-3.1-generate-preview' }] } } };
    const model = /^\/v1beta\/models\/([A-Za-z0-9._-]+)$/.exec(path);
    if (req.method === 'GET' && model?.[1] !== undefined) {
      const name = model[1];
      return {
        role: 'other',
        answer: () =>
          authFault(req) ?? { status: 200, json: { name: `models/${name}`, displayName: name, supportedGenerationMethods: ['predictLongRunning'] } },
      };
    }
    return undefined;
  }

  const http = new FakeHttp(book, route, () => rpc(404, 'NOT_FOUND', 'Requested entity was not found.'));
  await http.listen();
  return {
    get origin() {
      return http.origin;
    },
    book,
    http,
    acceptedByPrompt: http.stats.acceptedByPrompt,
    bodyOf: (id) => book.get(id)?.body,
    keylessDownloads,
    close: () => http.close(),
  };
}

import { FakeHttp, TaskBook, isRecord, type Answer, type FakeRequest, type KitOptions, type Reply, type Route } from './upstream-kit.js';

/**
 * A fake PixVerse Platform API (docs/channels.md#protocol-pixverse; https://docs.platform.pixverse.ai), its
 * requests and answers as the reference's examples show them: Upload Image
 * (https://docs.platform.pixverse.ai/upload-image-13016631e0), Text-to-Video
 * (https://docs.platform.pixverse.ai/text-to-video-generation-13016634e0), Get Video Generation
 * Status (https://docs.platform.pixverse.ai/get-video-generation-status-13016632e0), Common errors
 * (https://docs.platform.pixverse.ai/common-errors-and-solutions-882978m0):
 * - headers `API-KEY` and `Ai-trace-id`; every answer `{ErrCode, ErrMsg, Resp}`, business errors
 *   inside HTTP 200. A reused trace id does what the docs warn of: the task hangs in status 5.
 * - `POST /openapi/v2/image/upload`, the multipart file `image` (the one body field the Upload
 *   Image reference documents; anything else is an invalid parameter) -> `Resp.img_id`.
 * - `text` and `fusion` require `aspect_ratio` (Text-to-Video generation reference; Fusion guide).
 * - `POST /openapi/v2/video/{text,img,transition,fusion}/generate` -> `Resp.video_id`; `img` needs
 *   an uploaded `img_id`, `transition` the integer ids `first_frame_img`/`last_frame_img` (Transition
 *   reference, https://docs.platform.pixverse.ai/transitionfirst-last-frame-generation-15123014e0), `fusion` `image_references[{type, img_id, ref_name}]` with every `@ref_name` in the
 *   prompt followed by a space.
 * - `GET /openapi/v2/video/result/{id}` -> `Resp.status`: 5 generating, 1 success (`url`),
 *   6 deleted, 7 moderation failed, 8 failed.
 * The ErrCode numbers below are the fake's own (PixVerse publishes no full table);
 * the adapter classifies by the documented messages as well as by code.
 */

export const PIXVERSE_ERRORS = {
  auth: { code: 10005, msg: 'Invalid API-KEY' },
  traceMissing: { code: 400010, msg: 'Ai-trace-id is required' },
  invalid: { code: 400011, msg: 'Invalid parameter' },
  imageFormat: { code: 400012, msg: 'Unsupported image format' },
  notFound: { code: 500030, msg: 'Video not found' },
  concurrency: { code: 500044, msg: 'Reached the limit for concurrent generations.' },
  moderation: { code: 500054, msg: 'The content you uploaded failed moderation' },
  balance: { code: 500090, msg: 'Insufficient balance' },
} as const;

export interface PixverseFake {
  readonly origin: string;
  readonly book: TaskBook;
  readonly http: FakeHttp;
  /** Accepted submissions per prompt (see FakeStats.acceptedByPrompt). */
  readonly acceptedByPrompt: ReadonlyMap<string, number>;
  /** Every `Ai-trace-id` received, in order (uploads and generations). */
  readonly traceIds: string[];
  /** Uploaded images by id: the bytes and their type. */
  readonly uploads: Map<number, { readonly bytes?: Buffer; readonly mime?: string }>;
  /** The endpoint each video was created through (`text`, `img`, `transition`, `fusion`). */
  endpointOf(videoId: string): string | undefined;
  /** Deletes a video upstream (status 6). */
  deleteVideo(videoId: string): void;
  close(): Promise<void>;
}

const QUALITIES = ['360p', '540p', '720p', '1080p'];
const RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '2:3', '3:2', '21:9'];

function sniffImage(bytes: Buffer): string | undefined {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'image/jpeg';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return undefined;
}

export async function startPixverseFake(options: KitOptions = {}): Promise<PixverseFake> {
  let nextVideo = 380_000_000;
  let nextImage = 9_000;
  const book = new TaskBook(options, 'mp4', () => String((nextVideo += 1)));
  const apiKey = options.apiKey ?? 'pixverse-test-key';
  const traceIds: string[] = [];
  const seenTraces = new Set<string>();
  const uploads = new Map<number, { bytes?: Buffer; mime?: string }>();

  const ok = (resp: unknown): Reply => ({ status: 200, json: { ErrCode: 0, ErrMsg: 'success', Resp: resp } });
  const err = (e: { code: number; msg: string }): Reply => ({ status: 200, json: { ErrCode: e.code, ErrMsg: e.msg, Resp: {} } });

  /** Header checks shared by every call; returns the trace id or an error answer. */
  function gate(req: FakeRequest): { trace: string; reused: boolean } | Reply {
    if (req.headers['api-key'] !== apiKey) return err(PIXVERSE_ERRORS.auth);
    const trace = req.headers['ai-trace-id'];
    if (typeof trace !== 'string' || trace === '') return err(PIXVERSE_ERRORS.traceMissing);
    traceIds.push(trace);
    const reused = seenTraces.has(trace);
    seenTraces.add(trace);
    return { trace, reused };
  }

  async function upload(req: FakeRequest): Promise<Answer> {
    const gated = gate(req);
    if ('status' in gated) return gated;
    let form: FormData;
    try {
      form = await new Request('http://fake/upload', {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? '' },
        body: req.body,
      }).formData();
    } catch {
      // The upstream answers some upload errors with a non-JSON body.
      return { status: 400, body: '<html>Bad Request</html>', headers: { 'content-type': 'text/html' } };
    }
    const file = form.get('image');
    const id = (nextImage += 1);
    if (file !== null && typeof file !== 'string') {
      const bytes = Buffer.from(await file.arrayBuffer());
      const mime = sniffImage(bytes);
      if (!mime) return err(PIXVERSE_ERRORS.imageFormat);
      uploads.set(id, { bytes, mime });
    } else return err(PIXVERSE_ERRORS.invalid);
    return ok({ img_id: id, img_url: `${http.origin}/images/${id}.png` });
  }

  function invalidBody(endpoint: string, body: Record<string, unknown>): boolean {
    const model = body['model'];
    if (typeof model !== 'string' || typeof body['prompt'] !== 'string') return true;
    const duration = body['duration'];
    const modern = model === 'v6' || model === 'c1';
    if (typeof duration !== 'number' || (modern ? duration < 1 || duration > 15 : ![5, 8].includes(duration))) return true;
    if (typeof body['quality'] !== 'string' || !QUALITIES.includes(body['quality'])) return true;
    if (body['camera_movement'] !== undefined && model === 'c1') return true;
    if ((endpoint === 'text' || endpoint === 'fusion') && (typeof body['aspect_ratio'] !== 'string' || !RATIOS.includes(body['aspect_ratio']))) return true;
    const known = (id: unknown): boolean => typeof id === 'number' && uploads.has(id);
    if (endpoint === 'img' && !known(body['img_id'])) return true;
    if (endpoint === 'transition' && (!known(body['first_frame_img']) || !known(body['last_frame_img']))) return true;
    if (endpoint === 'fusion') {
      const refs = body['image_references'];
      if (!Array.isArray(refs) || refs.length < 1 || refs.length > (modern ? 7 : 3)) return true;
      for (const ref of refs) {
        if (!isRecord(ref) || !known(ref['img_id']) || (ref['type'] !== 'subject' && ref['type'] !== 'background')) return true;
        const name = ref['ref_name'];
        if (typeof name !== 'string' || Buffer.byteLength(name) > 30 || !body['prompt'].includes(`@${name} `)) return true;
      }
    }
    return false;
  }

  function generate(req: FakeRequest, endpoint: string): Answer {
    const gated = gate(req);
    if ('status' in gated) return gated;
    const body = req.json;
    if (!isRecord(body) || invalidBody(endpoint, body)) return err(PIXVERSE_ERRORS.invalid);
    const prompt = body['prompt'] as string;
    let plan = book.planFor(prompt, body);
    switch (plan.refuse) {
      case 'moderation':
        return err(PIXVERSE_ERRORS.moderation);
      case 'invalid':
        return err(PIXVERSE_ERRORS.invalid);
      case 'rate-limit':
        return err(PIXVERSE_ERRORS.concurrency);
      case 'quota':
        return err(PIXVERSE_ERRORS.balance);
      case 'none':
        break;
    }
    // A reused trace id leaves the task generating forever.
    if (gated.reused) plan = { ...plan, outcome: 'stuck' };
    const task = book.create(prompt, body, plan, { endpoint, trace: gated.trace });
    http.stats.accept(task);
    return plan.loseAnswer ? 'lose' : ok({ video_id: Number(task.id), credit: 45 });
  }

  function result(req: FakeRequest, id: string): Answer {
    const gated = gate(req);
    if ('status' in gated) return gated;
    const task = book.get(id);
    if (!task) return err(PIXVERSE_ERRORS.notFound);
    const state = book.state(task);
    const body = isRecord(task.body) ? task.body : {};
    const status = { queued: 5, running: 5, succeeded: 1, failed: 8, moderated: 7, cancelled: 6 }[state.phase];
    return ok({
      id: Number(task.id),
      status,
      url: state.phase === 'succeeded' ? http.fileUrl(task, 'output.mp4') : '',
      prompt: task.prompt,
      negative_prompt: body['negative_prompt'] ?? '',
      seed: body['seed'] ?? 0,
      outputWidth: 64,
      outputHeight: 64,
      resolution_ratio: 720,
      size: 1766,
      style: '',
      create_time: new Date(task.createdAt).toISOString(),
      modify_time: new Date(state.endedAt ?? book.clock()).toISOString(),
    });
  }

  function route(req: FakeRequest): Route | undefined {
    const path = req.url.pathname;
    if (req.method === 'POST' && path === '/openapi/v2/image/upload') return { role: 'upload', answer: () => upload(req) };
    const gen = /^\/openapi\/v2\/video\/(text|img|transition|fusion)\/generate$/.exec(path);
    const endpoint = gen?.[1];
    if (req.method === 'POST' && endpoint) return { role: 'submit', answer: () => generate(req, endpoint) };
    const res = /^\/openapi\/v2\/video\/result\/([^/]+)$/.exec(path);
    const videoId = res?.[1];
    if (req.method === 'GET' && videoId) return { role: 'poll', answer: () => result(req, decodeURIComponent(videoId)) };
    return undefined;
  }

  const http = new FakeHttp(book, route, () => ({ status: 404, json: { ErrCode: 404, ErrMsg: 'not found', Resp: {} } }));
  await http.listen();
  return {
    get origin() {
      return http.origin;
    },
    book,
    http,
    acceptedByPrompt: http.stats.acceptedByPrompt,
    traceIds,
    uploads,
    endpointOf: (id) => book.get(id)?.meta['endpoint'],
    deleteVideo(id) {
      const task = book.get(id);
      if (task) task.cancelledAt = book.clock();
    },
    close: () => http.close(),
  };
}

import { createVerify, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import {
  NOT_A_VIDEO,
  FakeHttp,
  TaskBook,
  TINY_MP4,
  bearer,
  type Answer,
  type FakeRequest,
  type FakeTask,
  type KitOptions,
  type Reply,
  type Route,
} from './upstream-kit.js';
import { planRefusal, RAI_OUTPUT_REASON, rpc, veoRefusal } from './veo-kit.js';

/**
 * A fake Vertex AI for Veo, with its own OAuth token endpoint (docs/channels.md#protocol-vertex;
 * https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/veo-video-generation;
 * https://developers.google.com/identity/protocols/oauth2/service-account#httprest;
 * googleapis/js-genai/src/operations.ts and js-genai/src/converters/_models_converters.ts):
 * - `POST /token` (the key file's `token_uri` points here): form-encoded
 *   `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>`. The JWT must be
 *   RS256, signed by the service account's key (verified with the public key of the test's key
 *   pair), `iss` the account's email, `aud` this token URI, `scope` cloud-platform, `exp` after
 *   now and at most an hour after `iat`; else 400 `{error: "invalid_grant"}`. Answers
 *   `{access_token, expires_in, token_type: "Bearer"}`; tokens expire after `tokenTtlS`.
 * - `Authorization: Bearer <token>` on every API call; a missing, unknown or expired token is
 *   401 UNAUTHENTICATED; another project or location than the account's is 403 PERMISSION_DENIED.
 * - `POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:predictLongRunning`
 *   -> `{name: "projects/{p}/locations/{l}/publishers/google/models/{m}/operations/{uuid}"}`.
 * - `POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:fetchPredictOperation`
 *   `{operationName}` -> `{name}` while running, then `{done: true, response: {videos:
 *   [{bytesBase64Encoded, mimeType}]}}` (or `[{gcsUri, mimeType}]` when the request set
 *   `parameters.storageUri`), `{done: true, error}`, or a filtered response
 *   (`raiMediaFilteredCount`, `raiMediaFilteredReasons`, no videos).
 * - `GET /v1/projects/{p}/locations/{l}/operations` (probes). No cancel.
 */

export interface VertexFakeOptions extends KitOptions {
  readonly project: string;
  readonly location: string;
  readonly clientEmail: string;
  /** The public half of the service account's key pair: the grant's JWT is verified with it. */
  readonly publicKey: KeyObject;
  /** Access token lifetime; default 3599 s as Google answers. */
  readonly tokenTtlS?: number;
}

export interface VertexFake {
  readonly origin: string;
  readonly tokenUri: string;
  readonly book: TaskBook;
  readonly http: FakeHttp;
  readonly acceptedByPrompt: ReadonlyMap<string, number>;
  /** Token grants answered with a token, and grants refused. */
  readonly grants: { ok: number; refused: number };
  /** The claims of the last assertion that was verified. */
  lastClaims(): Record<string, unknown> | undefined;
  bodyOf(operationId: string): unknown;
  /** Forget every access token (as if they expired): the next call must get a new one. */
  revokeTokens(): void;
  close(): Promise<void>;
}

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

function decodePart(part: string | undefined): Record<string, unknown> | undefined {
  if (part === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export async function startVertexFake(options: VertexFakeOptions): Promise<VertexFake> {
  const book = new TaskBook(options, 'mp4', randomUUID);
  const tokens = new Map<string, number>();
  const grants = { ok: 0, refused: 0 };
  let claimsSeen: Record<string, unknown> | undefined;
  const ttlS = options.tokenTtlS ?? 3599;

  function grant(req: FakeRequest): Reply {
    const invalid = (why: string): Reply => {
      grants.refused += 1;
      return { status: 400, json: { error: 'invalid_grant', error_description: why } };
    };
    if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return invalid('form-encoded body required');
    const form = new URLSearchParams(req.body.toString('utf8'));
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return { status: 400, json: { error: 'unsupported_grant_type' } };
    const [head, payload, signature] = (form.get('assertion') ?? '').split('.');
    const header = decodePart(head);
    const claims = decodePart(payload);
    if (!header || !claims || signature === undefined) return invalid('malformed JWT');
    if (header['alg'] !== 'RS256') return invalid('alg must be RS256');
    const verified = createVerify('RSA-SHA256').update(`${head}.${payload}`).verify(options.publicKey, Buffer.from(signature, 'base64url'));
    if (!verified) return invalid('Invalid JWT Signature.');
    const nowS = Math.floor(Date.now() / 1000);
    const iat = Number(claims['iat']);
    const exp = Number(claims['exp']);
    if (claims['iss'] !== options.clientEmail) return invalid('Invalid issuer');
    if (claims['aud'] !== `${http.origin}/token`) return invalid('Invalid audience');
    if (claims['scope'] !== SCOPE) return invalid('Invalid scope');
    if (!(exp > nowS) || !(exp - iat <= 3600) || iat > nowS + 60)
      return invalid('Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
    claimsSeen = claims;
    grants.ok += 1;
    const token = `ya29.fake-${randomBytes(12).toString('hex')}`;
    tokens.set(token, Date.now() + ttlS * 1000);
    return { status: 200, json: { access_token: token, expires_in: ttlS, token_type: 'Bearer' } };
  }

  function authFault(req: FakeRequest, project: string, location: string): Reply | undefined {
    const expires = tokens.get(bearer(req));
    if (expires === undefined || expires <= Date.now())
      return rpc(
        401,
        'UNAUTHENTICATED',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      );
    if (project !== options.project || location !== options.location) return rpc(403, 'PERMISSION_DENIED', `Permission denied on resource project ${project}.`);
    return undefined;
  }

  function operation(task: FakeTask): Record<string, unknown> {
    const name = `${task.meta['resource'] ?? ''}/operations/${task.id}`;
    const state = book.state(task);
    const type = 'type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse';
    switch (state.phase) {
      case 'queued':
      case 'running':
      case 'cancelled':
        return { name };
      case 'failed':
        return { name, done: true, error: { code: 13, message: 'Internal error encountered.' } };
      case 'moderated':
        return { name, done: true, response: { '@type': type, raiMediaFilteredCount: 1, raiMediaFilteredReasons: [RAI_OUTPUT_REASON] } };
      case 'succeeded': {
        if (task.plan.output === 'missing') return { name, done: true, response: { '@type': type, raiMediaFilteredCount: 0, videos: [] } };
        const storage = task.meta['storageUri'];
        const video =
          storage !== undefined && storage !== ''
            ? { gcsUri: `${storage.replace(/\/$/, '')}/${task.id}/sample_0.mp4`, mimeType: 'video/mp4' }
            : { bytesBase64Encoded: (task.plan.output === 'not-media' ? NOT_A_VIDEO : TINY_MP4).toString('base64'), mimeType: 'video/mp4' };
        return { name, done: true, response: { '@type': type, raiMediaFilteredCount: 0, videos: [video] } };
      }
    }
  }

  function create(req: FakeRequest, project: string, location: string, model: string): Answer {
    const fault = authFault(req, project, location);
    if (fault) return fault;
    const refusal = veoRefusal(req.json, true);
    if (refusal) return rpc(400, 'INVALID_ARGUMENT', refusal);
    const body = req.json as Record<string, unknown>;
    const instance = (body['instances'] as Record<string, unknown>[])[0] ?? {};
    const parameters = (body['parameters'] ?? {}) as Record<string, unknown>;
    const prompt = typeof instance['prompt'] === 'string' ? instance['prompt'] : '';
    const plan = book.planFor(prompt, body);
    const early = planRefusal(plan);
    if (early) return early;
    const resource = `projects/${project}/locations/${location}/publishers/google/models/${model}`;
    const task = book.create(prompt, body, plan, { resource, storageUri: typeof parameters['storageUri'] === 'string' ? parameters['storageUri'] : '' });
    http.stats.accept(task);
    return plan.loseAnswer ? 'lose' : { status: 200, json: { name: `${resource}/operations/${task.id}` } };
  }

  function fetchOperation(req: FakeRequest, project: string, location: string, model: string): Answer {
    const fault = authFault(req, project, location);
    if (fault) return fault;
    const name =
      typeof (req.json as Record<string, unknown> | undefined)?.['operationName'] === 'string'
        ? String((req.json as Record<string, unknown>)['operationName'])
        : '';
    const id = name.split('/operations/')[1] ?? '';
    const task = book.get(id);
    if (!task || task.meta['resource'] !== `projects/${project}/locations/${location}/publishers/google/models/${model}`)
      return rpc(404, 'NOT_FOUND', `Operation ${name} not found.`);
    return { status: 200, json: operation(task) };
  }

  function route(req: FakeRequest): Route | undefined {
    const path = req.url.pathname;
    if (req.method === 'POST' && path === '/token') return { role: 'other', answer: () => grant(req) };
    const call = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/google\/models\/([A-Za-z0-9._-]+):(predictLongRunning|fetchPredictOperation)$/.exec(
      path,
    );
    if (req.method === 'POST' && call) {
      const [, project = '', location = '', model = '', verb] = call;
      if (verb === 'predictLongRunning') return { role: 'submit', answer: () => create(req, project, location, model) };
      return { role: 'poll', answer: () => fetchOperation(req, project, location, model) };
    }
    const list = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/operations$/.exec(path);
    if (req.method === 'GET' && list) {
      const [, project = '', location = ''] = list;
      return { role: 'other', answer: () => authFault(req, project, location) ?? { status: 200, json: { operations: [] } } };
    }
    return undefined;
  }

  const http = new FakeHttp(book, route, () => rpc(404, 'NOT_FOUND', 'The requested URL was not found on this server.'));
  await http.listen();
  return {
    get origin() {
      return http.origin;
    },
    get tokenUri() {
      return `${http.origin}/token`;
    },
    book,
    http,
    acceptedByPrompt: http.stats.acceptedByPrompt,
    grants,
    lastClaims: () => claimsSeen,
    bodyOf: (id) => book.get(id)?.body,
    revokeTokens: () => tokens.clear(),
    close: () => http.close(),
  };
}

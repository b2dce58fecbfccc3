import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseChannelsConfig, ChannelsConfigError } from '../src/channels/config.js';
import { createGoogleTokenSource } from '../src/channels/google-auth.js';
import type { ServiceAccountKey } from '../src/channels/google-config.js';
import { profileFor } from '../src/channels/profiles.js';
import { vertexAdapter } from '../src/channels/protocols/vertex.js';
import { adapterContext, copyFirstOutput, videoJob, type TestContext } from './fakes/adapter-context.js';
import { TINY_MP4, TINY_PNG } from './fakes/upstream-kit.js';
import { startVertexFake, type VertexFake } from './fakes/vertex.js';

const PROJECT = 'mediagate-test';
const LOCATION = 'us-central1';
const EMAIL = 'veo@mediagate-test.iam.gserviceaccount.com';
const MODEL = 'veo-3.1-generate-001';
const PNG = `data:image/png;base64,${TINY_PNG.toString('base64')}`;
// A key pair made for this spec: the fake verifies the grant's RS256 JWT with the public half.
const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_PEM = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
let now = 1_800_000_000_000;
let fake: VertexFake;
let key: ServiceAccountKey;
let ctx: TestContext;
let closeTokens: () => Promise<void>;

function contextWith(source: ReturnType<typeof createGoogleTokenSource>, model = MODEL): TestContext {
  const base = adapterContext({ baseUrl: fake.origin, apiKey: '', upstreamModel: model, profile: profileFor('vertex', model) });
  return { ...base, google: { project: PROJECT, location: LOCATION, token: () => source.token() } };
}

beforeAll(async () => {
  fake = await startVertexFake({
    project: PROJECT,
    location: LOCATION,
    clientEmail: EMAIL,
    publicKey: pair.publicKey,
    clock: () => now,
    queuedMs: 1_000,
    runMs: 10_000,
  });
  key = { clientEmail: EMAIL, privateKey: PRIVATE_PEM, privateKeyId: 'k1', tokenUri: fake.tokenUri };
  const source = createGoogleTokenSource(key);
  closeTokens = () => source.close();
  ctx = contextWith(source);
});
afterAll(async () => {
  await ctx.close();
  await closeTokens();
  await fake.close();
});
beforeEach(() => {
  now += 3_600_000;
});

async function accepted(params: Record<string, unknown>, on: TestContext = ctx): Promise<string> {
  const outcome = await vertexAdapter.submit(on, videoJob({ duration: 8, ...params }));
  if (outcome.outcome !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
  return outcome.upstreamId;
}
const opId = (name: string): string => name.split('/').pop() ?? '';

describe('vertex (Veo on Vertex AI)', () => {
  it('gets a token by the RS256 JWT-bearer grant at the key file token_uri, and shares one refresh between concurrent callers', async () => {
    const source = createGoogleTokenSource(key);
    const before = fake.grants.ok;
    const tokens = await Promise.all(Array.from({ length: 20 }, () => source.token()));
    expect(fake.grants.ok).toBe(before + 1);
    expect(new Set(tokens.map((t) => (t.ok ? t.token : 'failed')))).toEqual(new Set([tokens[0]?.ok ? tokens[0].token : '']));
    expect(fake.lastClaims()).toMatchObject({ iss: EMAIL, aud: fake.tokenUri, scope: 'https://www.googleapis.com/auth/cloud-platform' });
    // Cached: no new grant until shortly before expiry.
    await source.token();
    expect(fake.grants.ok).toBe(before + 1);
    await source.close();
  });

  it('renews a token shortly before it expires, and a key the endpoint does not trust is refused', async () => {
    // The first grant is signed 55 minutes in the past (still valid: assertions live an hour), so
    // the renewal lands at the fake's own present.
    let clock = Date.now() - 55 * 60_000;
    const source = createGoogleTokenSource(key, { now: () => clock });
    const first = await source.token();
    const grants = fake.grants.ok;
    clock += 3599_000 - 4 * 60_000; // inside the five-minute renewal margin
    const second = await source.token();
    expect(fake.grants.ok).toBe(grants + 1);
    expect(first.ok && second.ok && first.token !== second.token).toBe(true);
    await source.close();
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const forged = createGoogleTokenSource({ ...key, privateKey: other });
    expect(await forged.token()).toMatchObject({ ok: false, kind: 'refused', reason: 'token endpoint answered HTTP 400: invalid_grant' });
    await forged.close();
    const down = createGoogleTokenSource({ ...key, tokenUri: 'http://127.0.0.1:9/token' });
    expect(await down.token()).toMatchObject({ ok: false, kind: 'not_sent' });
    await down.close();
  });

  it('submits predictLongRunning on the project and location, with seed and generateAudio, never storageUri', async () => {
    const name = await accepted({ prompt: 'a cat', image: PNG, seed: 7, audio_enable: false, resolution: '1080p', aspect_ratio: '16:9' });
    expect(name).toMatch(
      new RegExp(`^projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/${MODEL.replace(/\./g, '\\.')}/operations/[0-9a-f-]{36}$`),
    );
    expect(fake.bodyOf(opId(name))).toEqual({
      instances: [{ prompt: 'a cat', image: { bytesBase64Encoded: TINY_PNG.toString('base64'), mimeType: 'image/png' } }],
      parameters: { sampleCount: 1, durationSeconds: 8, resolution: '1080p', aspectRatio: '16:9', seed: 7, generateAudio: false },
    });
  });

  it('fetchPredictOperation: not done -> running; done -> the inline Base64 video, decoded into our copy (real MP4 bytes)', async () => {
    const name = await accepted({ prompt: 'x' });
    expect(await vertexAdapter.poll(ctx, name)).toEqual({ state: 'running', upstreamWord: 'not done' });
    now += 20_000;
    const done = await vertexAdapter.poll(ctx, name);
    expect(done).toMatchObject({ state: 'succeeded', reportedUsage: { videos: 1 } });
    if (done.state !== 'succeeded') throw new Error('not done');
    expect(done.outputs[0]?.url.startsWith('data:video/mp4;base64,')).toBe(true);
    const kept = await copyFirstOutput(done, fake.origin);
    expect(kept.ok && kept.bytes.equals(TINY_MP4)).toBe(true);
  });

  it('done with an error -> upstream_error; filtered -> content_policy_violation; inline bytes that are not a video -> output_invalid', async () => {
    const failed = await accepted({ prompt: 'x [fake:fail]' });
    const filtered = await accepted({ prompt: 'x [fake:moderation]' });
    const notMedia = await accepted({ prompt: 'x [fake:not-media]' });
    const missing = await accepted({ prompt: 'x [fake:missing-output]' });
    now += 20_000;
    expect(await vertexAdapter.poll(ctx, failed)).toMatchObject({ state: 'failed', error: { code: 'upstream_error' } });
    expect(await vertexAdapter.poll(ctx, filtered)).toMatchObject({
      state: 'failed',
      upstreamWord: 'done: filtered',
      error: { code: 'content_policy_violation' },
    });
    expect(await vertexAdapter.poll(ctx, missing)).toMatchObject({ state: 'failed', error: { code: 'output_invalid' } });
    const bad = await vertexAdapter.poll(ctx, notMedia);
    expect(await copyFirstOutput(bad, fake.origin)).toMatchObject({ ok: false, code: 'output_invalid', message: expect.stringContaining('not an MP4') });
  });

  it('a prompt refused at submit is a final content_policy_violation; 429 with RetryInfo or Retry-After is refused with the wait', async () => {
    expect(await vertexAdapter.submit(ctx, videoJob({ prompt: 'x [fake:moderation-early]', duration: 8 }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'content_policy_violation' },
    });
    expect(await vertexAdapter.submit(ctx, videoJob({ prompt: 'x [fake:rate-limit]', duration: 8 }))).toMatchObject({
      outcome: 'refused',
      retryAfterMs: 7_000,
    });
    fake.http.inject({ on: 'submit', kind: '429-retry-after', retryAfterS: 12 });
    expect(await vertexAdapter.submit(ctx, videoJob({ prompt: 'x', duration: 8 }))).toMatchObject({ outcome: 'refused', retryAfterMs: 12_000 });
    const name = await accepted({ prompt: 'x' });
    fake.http.inject({ on: 'poll', kind: '429' });
    expect(await vertexAdapter.poll(ctx, name)).toEqual({ state: 'throttled' });
  });

  it('without a token nothing is sent: submit refused (fail over), poll transient, probe failed', async () => {
    const down = createGoogleTokenSource({ ...key, tokenUri: 'http://127.0.0.1:9/token' });
    const dead = contextWith(down);
    const before = fake.http.stats.byRole.get('submit') ?? 0;
    expect(await vertexAdapter.submit(dead, videoJob({ prompt: 'x', duration: 8 }))).toMatchObject({ outcome: 'refused' });
    expect(fake.http.stats.byRole.get('submit') ?? 0).toBe(before);
    expect((await vertexAdapter.poll(dead, `projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/${MODEL}/operations/x`)).state).toBe(
      'transient',
    );
    expect((await vertexAdapter.probe(dead)).ok).toBe(false);
    await dead.close();
    await down.close();
    expect(await vertexAdapter.probe(ctx)).toEqual({ ok: true, detail: `project ${PROJECT} in ${LOCATION}` });
  });

  it('a lost submit answer is unknown with exactly one operation upstream; no reconcile, no cancel; an unknown operation is not_found', async () => {
    const before = fake.http.stats.accepted;
    expect((await vertexAdapter.submit(ctx, videoJob({ prompt: 'x [fake:lose-answer]', duration: 8 }))).outcome).toBe('unknown');
    expect(fake.http.stats.accepted).toBe(before + 1);
    expect('reconcile' in vertexAdapter).toBe(false);
    expect('cancel' in vertexAdapter).toBe(false);
    expect((await vertexAdapter.poll(ctx, `projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/${MODEL}/operations/nope`)).state).toBe(
      'not_found',
    );
  });

  it('the vertex profile takes a seed and the audio switch, and refuses what Veo 3.1 cannot render', () => {
    const spec = { channel: 'c', upstreamModel: MODEL, profile: profileFor('vertex', MODEL) };
    expect(vertexAdapter.check(spec, 'video', { prompt: 'x', duration: 8, seed: 4294967295, audio_enable: false })).toBeUndefined();
    expect(vertexAdapter.check(spec, 'video', { prompt: 'x', duration: 5 })?.param).toBe('duration');
    expect(vertexAdapter.check(spec, 'video', { prompt: 'x', duration: 4, resolution: '1080p' })?.param).toBe('resolution');
  });
});

describe('vertex channel configuration', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mg-vertex-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const file = (channel: Record<string, unknown>): string =>
    JSON.stringify({
      channels: { veo: { protocol: 'vertex', ...channel } },
      routes: [{ model: 'vendora/famw-3.0-i2v-spicy', to: [{ channel: 'veo', upstream_model: MODEL }] }],
    });

  it('reads project, location and the key file; base_url defaults to the regional host; the private key is a secret', async () => {
    const path = join(dir, 'sa.json');
    await writeFile(
      path,
      JSON.stringify({
        type: 'service_account',
        client_email: EMAIL,
        private_key: PRIVATE_PEM,
        private_key_id: 'k1',
        token_uri: 'https://oauth2.googleapis.com/token',
      }),
    );
    const config = parseChannelsConfig(file({ project: PROJECT, location: 'europe-west4', credentials_file_env: 'SA_FILE' }), { SA_FILE: path });
    const channel = config.channels.get('veo');
    expect(channel).toMatchObject({
      baseUrl: 'https://europe-west4-aiplatform.googleapis.com',
      apiKey: '',
      vertex: { project: PROJECT, location: 'europe-west4' },
    });
    expect(config.secrets).toContain(PRIVATE_PEM);
    const gemini = parseChannelsConfig(
      JSON.stringify({ channels: { g: { protocol: 'gemini', api_key_env: 'K' } }, routes: [{ model: '*', to: [{ channel: 'g' }] }] }),
      { K: 'AIza' },
    );
    expect(gemini.channels.get('g')?.baseUrl).toBe('https://generativelanguage.googleapis.com');
  });

  it('every fault is named by its JSON path', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ type: 'authorized_user' }));
    const faults = (channel: Record<string, unknown>, env: Record<string, string>): readonly string[] => {
      try {
        parseChannelsConfig(file(channel), env);
        return [];
      } catch (err) {
        if (err instanceof ChannelsConfigError) return err.faults;
        throw err;
      }
    };
    expect(faults({ location: LOCATION, credentials_file_env: 'SA' }, { SA: bad })).toEqual([
      'channels.veo.project: is required (the Google Cloud project id)',
      'channels.veo.credentials_file_env: the file named by SA is not a service-account key ("type": "service_account")',
    ]);
    expect(faults({ project: PROJECT, location: LOCATION, credentials_file_env: 'SA', api_key_env: 'K' }, { SA: join(dir, 'none.json'), K: 'k' })).toEqual([
      'channels.veo.api_key_env: a vertex channel authenticates with credentials_file_env (a service-account key)',
      'channels.veo.credentials_file_env: cannot read the file named by SA: ENOENT',
    ]);
  });
});

// Every route example of docs/guides/channels.md and docs/channels.md, run against the strict fake of its
// protocol: the request a client would send is validated by the catalog, checked against the
// route's target as at create (profiles, the adapter's own rules), submitted by the adapter to
// the fake (which refuses what the provider refuses), and polled to a finished output. The
// fakes record inputs a model does not declare; none may arrive. `mediagate` targets are this
// interface itself (test/channels-via-mediagate.test.ts runs them against a real mediagate).
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS, createValidator, type ModelKind, type ResolvedParams } from '../src/catalog/index.js';
import { parseChannelsConfig, type ChannelsConfig } from '../src/channels/config.js';
import { createGoogleTokenSource } from '../src/channels/google-auth.js';
import { createKlingTokenSource } from '../src/channels/kling-auth.js';
import { checkProfile, isRefusal, planInputs, profileFor, type TargetProfile } from '../src/channels/profiles.js';
import { ADAPTERS } from '../src/channels/protocols/index.js';
import type { ProtocolName } from '../src/channels/protocol.js';
import { createTargetCheck } from '../src/channels/targets.js';
import { adapterContext, pollUntilSettled } from './fakes/adapter-context.js';
import { startArkFake } from './fakes/ark.js';
import { startDashscopeFake } from './fakes/dashscope.js';
import { startFalFake, type FalFake } from './fakes/fal.js';
import { startGeminiFake } from './fakes/gemini.js';
import { startKlingFake } from './fakes/kling.js';
import { startLumaFake } from './fakes/luma.js';
import { startMinimaxFake } from './fakes/minimax.js';
import { startPixverseFake } from './fakes/pixverse.js';
import { startReplicateFake, type ReplicateFake } from './fakes/replicate.js';
import { startRunwayFake } from './fakes/runway.js';
import { startXaiFake } from './fakes/xai.js';
import { TINY_PNG, type FakeHttp, type TaskBook } from './fakes/upstream-kit.js';
import { startVertexFake, type VertexFake } from './fakes/vertex.js';

const KEY = 'example-key';
const HTTPS_IMAGE = 'https://img.example/first-frame.png';
/** A vertex example's service account: the key file its `credentials_file_env` names; the fake checks the grant with the public half. */
const SERVICE_ACCOUNT = generateKeyPairSync('rsa', { modulusLength: 2048 });
const SA_EMAIL = 'examples@mediagate-examples.iam.gserviceaccount.com';
const SA_FILE = join(mkdtempSync(join(tmpdir(), 'mg-examples-')), 'service-account.json');
const SA_PEM = SERVICE_ACCOUNT.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
writeFileSync(
  SA_FILE,
  JSON.stringify({ type: 'service_account', client_email: SA_EMAIL, private_key: SA_PEM, token_uri: 'https://oauth2.googleapis.com/token' }),
);

interface Example {
  readonly where: string;
  readonly model: string;
  readonly channel: string;
  readonly protocol: ProtocolName;
  readonly upstreamModel: string;
  /** The target's place in its route: 0 the first, then the fallbacks (gemini's `vertex`). */
  readonly targetIndex: number;
  readonly config: ChannelsConfig;
}

/** The JSON blocks of a page that are channels files. */
function examplesOf(file: string): Example[] {
  const text = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
  const out: Example[] = [];
  for (const [, block = ''] of text.matchAll(/```json\n([\s\S]*?)```/g)) {
    const doc = JSON.parse(block) as {
      channels?: Record<string, { protocol: string; api_key_env?: string; credentials_file_env?: string; access_key_env?: string; secret_key_env?: string }>;
      routes?: unknown[];
    };
    if (!doc.channels || !doc.routes) continue;
    const env: Record<string, string> = {};
    for (const c of Object.values(doc.channels)) {
      if (c.api_key_env) env[c.api_key_env] = KEY;
      if (c.credentials_file_env) env[c.credentials_file_env] = SA_FILE;
      if (c.access_key_env) env[c.access_key_env] = KEY;
      if (c.secret_key_env) env[c.secret_key_env] = KEY;
    }
    const config = parseChannelsConfig(block, env);
    for (const [model, targets] of config.routes) {
      // A "*" route stands for every model; the examples name their models explicitly.
      if (!block.includes(`"${model}"`)) continue;
      // Every target runs: a fallback takes the same request when the first one refuses it.
      targets.forEach((target, targetIndex) => {
        const channel = config.channels.get(target.channel);
        if (!channel || channel.protocol === 'sandbox' || channel.protocol === 'mediagate') return;
        out.push({ where: file, model, channel: channel.name, protocol: channel.protocol, upstreamModel: target.upstreamModel, targetIndex, config });
      });
    }
  }
  return out;
}

const EXAMPLES = [...examplesOf('docs/guides/channels.md'), ...examplesOf('docs/channels.md')];

/**
 * The same targets counted from the raw JSON, without the config parser: every target on an
 * upstream channel (not the sandbox, not another mediagate) of a route that names its model.
 */
function targetsIn(file: string): number {
  const text = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
  let count = 0;
  for (const [, block = ''] of text.matchAll(/```json\n([\s\S]*?)```/g)) {
    const doc = JSON.parse(block) as { channels?: Record<string, { protocol: string }>; routes?: { model: string; to: { channel: string }[] }[] };
    if (!doc.channels || !doc.routes) continue;
    for (const route of doc.routes) {
      if (route.model === '*') continue;
      for (const target of route.to) {
        const protocol = doc.channels[target.channel]?.protocol;
        if (protocol !== undefined && protocol !== 'mediagate') count += 1;
      }
    }
  }
  return count;
}

const at = (value: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((node, key) => (typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined), value);

/** Every string in a body, depth first. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(strings);
  return [];
}

const same = (sent: unknown, expected: unknown): boolean =>
  typeof sent === 'string' && typeof expected === 'string' ? sent.toLowerCase() === expected.toLowerCase() : sent === expected;

/**
 * How each parameter of the request arrived in the body the fake received, as the target's
 * profile says it must: for a closed profile every planned input at its field with its value
 * (the string "5", the mode "pro", the nearest aspect ratio); for an open one every profiled
 * parameter at its documented field (case aside: DashScope upper-cases 720p). The prompt and
 * every https input arrive as given (PixVerse uploads images: they arrive as img_id).
 */
function arrival(example: Example, kind: ModelKind, params: ResolvedParams, body: unknown, profile: TargetProfile | undefined): string[] {
  const problems: string[] = [];
  const texts = strings(body);
  if (!texts.some((text) => text.includes(String(params['prompt'])))) problems.push('the prompt did not arrive');
  // PixVerse uploads images; Veo takes them as inline bytes: neither sends the URL.
  if (!['pixverse', 'gemini', 'vertex'].includes(example.protocol)) {
    const urls = [params['image'], params['end_image'], ...(Array.isArray(params['images']) ? params['images'] : [])].filter((v) => typeof v === 'string');
    for (const url of urls) if (!texts.includes(url)) problems.push(`${url} did not arrive`);
  }
  if (!profile) return problems;
  if (profile.closed) {
    // Replicate's body is {input} ({version, input} for a version); fal's is the input itself.
    const input = example.protocol === 'replicate' ? at(body, 'input') : body;
    const plan = planInputs(profile, kind, params, 'target');
    if (!plan.ok) return [...problems, plan.problem.message];
    for (const planned of plan.inputs) {
      if (planned.media) continue;
      const sent = at(input, planned.field);
      if (!same(sent, planned.value)) problems.push(`${planned.param} -> ${planned.field}: ${JSON.stringify(sent)}, not ${JSON.stringify(planned.value)}`);
    }
    return problems;
  }
  for (const [param, rule] of Object.entries(profile.params)) {
    const value = params[param];
    if (isRefusal(rule) || value === undefined || value === null || (rule.omit ?? []).includes(value as never) || rule.type === 'media') continue;
    const expected = (typeof value === 'string' || typeof value === 'number' ? rule.map?.[String(value)] : undefined) ?? value;
    if (!same(at(body, rule.field), expected))
      problems.push(`${param} -> ${rule.field}: ${JSON.stringify(at(body, rule.field))}, not ${JSON.stringify(expected)}`);
  }
  return problems;
}

/**
 * What a client sends for the example (beyond model and prompt): the model's required inputs,
 * and where the target cannot take the catalog's default, the value it can (documented in
 * docs/channels.md "Target profiles": the default request of such a route is a 400).
 */
const CHOSEN: Readonly<Record<string, Record<string, unknown>>> = {
  'vendorb/famsd-2.0-i2v-spicy -> fal-ai/kling-video/v2.1/pro/image-to-video?end_image=tail_image_url': { resolution: '1080p' },
  'vendora/famz-image-spicy -> fal-ai/flux/dev': { prompt_extend: false },
  'vendora/famz-image-spicy -> wan2.6-t2i': { size: '1280x1280' },
  // Veo renders 4, 6 or 8 s; the catalog's default is 5.
  'vendora/famw-3.0-i2v-spicy -> veo-3.1-generate-preview': { duration: 8 },
  'vendora/famw-3.0-i2v-spicy -> veo-3.1-generate-001': { duration: 8 },
  'vendora/famw-2.7-t2v -> veo-3.1-generate-001': { duration: 8 },
};

function requestFor(example: Example): { kind: ModelKind; body: Record<string, unknown> } {
  const row = MODELS.find((candidate) => candidate.id === example.model);
  if (!row) throw new Error(`no catalog row ${example.model}`);
  const body: Record<string, unknown> = { model: row.id, prompt: `example ${example.where} ${row.id}` };
  // PixVerse takes images as uploaded bytes only: an https image would be fetched by us (no network here).
  const IMAGE = ['pixverse', 'gemini', 'vertex'].includes(example.protocol) ? `data:image/png;base64,${TINY_PNG.toString('base64')}` : HTTPS_IMAGE;
  if (row.kind === 'video') {
    if (row.required.includes('image')) body['image'] = IMAGE;
    if (row.required.includes('images')) body['images'] = [IMAGE];
    if (row.required.includes('aspect_ratio')) body['aspect_ratio'] = '16:9';
    if (row.atLeastOneOf) body['images'] = [IMAGE];
    // Reference tags: the prompt names each reference (PixVerse fusion requires it).
    if (row.imageOptions) body['prompt'] = `${String(body['prompt'])} with @image1`;
  }
  return { kind: row.kind, body: { ...body, ...CHOSEN[`${example.model} -> ${example.upstreamModel}`] } };
}

interface Fake {
  readonly origin: string;
  readonly book: TaskBook;
  readonly http: FakeHttp;
  close(): Promise<void>;
}

const fakes = new Map<ProtocolName, Fake>();
let fal: FalFake;
let replicate: ReplicateFake;
let vertex: VertexFake;

beforeAll(async () => {
  const fast = { apiKey: KEY, queuedMs: 0, runMs: 0 };
  fal = await startFalFake(fast);
  replicate = await startReplicateFake(fast);
  fakes.set('fal', fal);
  fakes.set('replicate', replicate);
  fakes.set('dashscope', await startDashscopeFake(fast));
  fakes.set('ark', await startArkFake(fast));
  fakes.set('minimax', await startMinimaxFake(fast));
  fakes.set('pixverse', await startPixverseFake(fast));
  fakes.set('gemini', await startGeminiFake(fast));
  vertex = await startVertexFake({ ...fast, project: 'my-project', location: 'us-central1', clientEmail: SA_EMAIL, publicKey: SERVICE_ACCOUNT.publicKey });
  fakes.set('vertex', vertex);
  fakes.set('kling', await startKlingFake({ ...fast, accessKey: KEY, secretKey: KEY }));
  fakes.set('runway', await startRunwayFake(fast));
  fakes.set('luma', await startLumaFake(fast));
  fakes.set('xai', await startXaiFake(fast));
});
afterAll(async () => {
  await Promise.all([...fakes.values()].map((fake) => fake.close()));
});

describe('the route examples of the docs', () => {
  it('are found (one per protocol at least), every route of every example file', () => {
    expect(new Set(EXAMPLES.map((example) => example.protocol))).toEqual(
      new Set(['dashscope', 'ark', 'minimax', 'pixverse', 'fal', 'replicate', 'gemini', 'vertex', 'kling', 'runway', 'luma', 'xai']),
    );
    expect(EXAMPLES.length).toBe(targetsIn('docs/guides/channels.md') + targetsIn('docs/channels.md'));
    // README links to the guide for examples; were it to grow a channels file, it would be read too.
    expect(readFileSync(new URL('../README.md', import.meta.url), 'utf8')).not.toContain('"upstream_model"');
  });

  it.each(
    EXAMPLES.map(
      (example) =>
        [`${example.where}: ${example.model} -> ${example.protocol} ${example.upstreamModel}${example.targetIndex > 0 ? ' (fallback)' : ''}`, example] as const,
    ),
  )('%s completes, its inputs as the provider documents them', async (_name, example) => {
    const validator = createValidator(MODELS);
    const { kind, body } = requestFor(example);
    const validated = validator.validate(kind, { body, bodyBytes: JSON.stringify(body).length });
    if (!validated.ok) throw new Error(`the catalog refused the example request: ${JSON.stringify(validated.error)}`);
    // As at create: the route's first target must be able to take it (a fallback's own check runs in its submit).
    if (example.targetIndex === 0) expect(createTargetCheck(example.config, ADAPTERS)(example.model, kind, validated.params)).toBeUndefined();
    const fake = fakes.get(example.protocol);
    const adapter = ADAPTERS[example.protocol];
    if (!fake || !adapter) throw new Error(`no fake for ${example.protocol}`);
    const target = example.config.targetsFor(example.model)[example.targetIndex];
    const base = adapterContext({
      baseUrl: fake.origin,
      apiKey: KEY,
      upstreamModel: example.upstreamModel,
      profile: profileFor(example.protocol, example.upstreamModel, target?.profile),
    });
    // A vertex channel's project and location as the example configures them; its grant goes to the fake's token endpoint.
    const vertexSettings = example.config.channels.get(example.channel)?.vertex;
    const tokens = vertexSettings ? createGoogleTokenSource({ ...vertexSettings.key, tokenUri: vertex.tokenUri }) : undefined;
    // A kling channel signs its token with the example's keys.
    const kling = example.config.channels.get(example.channel)?.kling ? createKlingTokenSource(KEY, KEY) : undefined;
    const ctx =
      vertexSettings && tokens
        ? { ...base, google: { project: vertexSettings.project, location: vertexSettings.location, token: () => tokens.token() } }
        : kling
          ? { ...base, kling }
          : base;
    try {
      const submitted = await adapter.submit(ctx, {
        taskId: `tsk_example_${EXAMPLES.indexOf(example)}`,
        kind,
        model: example.model,
        params: validated.params,
      });
      if (submitted.outcome !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(submitted)}`);
      const { last } = await pollUntilSettled(adapter, ctx, submitted.upstreamId);
      expect(last.state, JSON.stringify(last)).toBe('succeeded');
      const id = example.protocol === 'fal' ? (submitted.upstreamId.split('|')[1] ?? '') : submitted.upstreamId.split('|')[0];
      if (example.protocol === 'fal') expect(fal.ignoredFields.get(id ?? '')).toBeUndefined();
      if (example.protocol === 'replicate') expect(replicate.ignoredInputs.get(id ?? '')).toBeUndefined();
      const received = [...fake.book.tasks.values()].find((task) => task.prompt.includes(String(validated.params['prompt'])));
      expect(received, 'the fake holds the task').toBeDefined();
      expect(arrival(example, kind, validated.params, received?.body, ctx.profile)).toEqual([]);
    } finally {
      await ctx.close();
      await tokens?.close();
    }
  });

  it('a route whose target cannot take a default says so at create, naming the parameter', () => {
    const validator = createValidator(MODELS);
    const checked = new Set<string>();
    for (const example of EXAMPLES) {
      const key = `${example.model} -> ${example.upstreamModel}`;
      if (CHOSEN[key] === undefined) continue;
      checked.add(key);
      const { kind, body } = requestFor(example);
      const bare = Object.fromEntries(Object.entries(body).filter(([name]) => !(name in (CHOSEN[key] ?? {}))));
      const validated = validator.validate(kind, { body: bare, bodyBytes: 100 });
      if (!validated.ok) throw new Error(JSON.stringify(validated.error));
      // The first target is checked at create; a fallback by its own profile when the task fails over to it.
      const fallback = example.config.targetsFor(example.model)[example.targetIndex];
      const problem =
        example.targetIndex === 0
          ? createTargetCheck(example.config, ADAPTERS)(example.model, kind, validated.params)
          : checkProfile(profileFor(example.protocol, example.upstreamModel, fallback?.profile), kind, validated.params, key);
      expect(problem, key).toBeDefined();
      expect(
        Object.keys(CHOSEN[key] ?? {})
          .map((name) => (name === 'size' ? ['size', 'width'] : [name]))
          .flat(),
        key,
      ).toContain(problem?.param);
    }
    // Every chosen route is still among the docs' examples: a renamed upstream model cannot skip its check.
    expect([...checked].sort()).toEqual(Object.keys(CHOSEN).sort());
  });
});

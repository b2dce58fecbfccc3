// The kling adapter against the fake Kling API over real HTTP: the signed token, the business
// codes (policy, rate, account), the usage Kling reports, and reconcile by external_task_id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKlingTokenSource, klingJwt } from '../src/channels/kling-auth.js';
import { profileFor } from '../src/channels/profiles.js';
import { klingAdapter } from '../src/channels/protocols/kling.js';
import { adapterContext, pollUntilSettled, videoJob, type TestContext } from './fakes/adapter-context.js';
import { startKlingFake, type KlingFake } from './fakes/kling.js';

const ACCESS = 'ak-unit';
const SECRET = 'sk-unit';

describe('kling adapter', () => {
  let fake: KlingFake;
  let ctx: TestContext;

  function context(model: string, secret = SECRET): TestContext {
    const base = adapterContext({ baseUrl: fake.origin, apiKey: ACCESS, upstreamModel: model, profile: profileFor('kling', model) });
    return Object.assign(base, { kling: createKlingTokenSource(ACCESS, secret) });
  }

  beforeAll(async () => {
    fake = await startKlingFake({ accessKey: ACCESS, secretKey: SECRET, queuedMs: 20, runMs: 60 });
    ctx = context('kling-v3');
  });
  afterAll(async () => {
    await ctx.close();
    await fake.close();
  });

  it('signs HS256 with iss, exp = now + 1800 and nbf = now - 5', () => {
    const [head, body] = klingJwt('ak', 'sk', 1_000_000).split('.');
    expect(JSON.parse(Buffer.from(head ?? '', 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(JSON.parse(Buffer.from(body ?? '', 'base64url').toString())).toEqual({ iss: 'ak', exp: 1_001_800, nbf: 999_995 });
  });

  it('keeps one token until five minutes before it expires, then signs a new one', () => {
    let now = 1_000_000_000;
    const source = createKlingTokenSource('ak', 'sk', () => now);
    const first = source.token();
    now += 1_400_000;
    expect(source.token()).toBe(first);
    now += 200_000;
    expect(source.token()).not.toBe(first);
  });

  it('completes and reports final_unit_deduction as credits', async () => {
    const job = videoJob({ prompt: 'unit ok', duration: 5, resolution: '1080p' });
    const submitted = await klingAdapter.submit(ctx, job);
    expect(submitted).toMatchObject({ outcome: 'accepted' });
    if (submitted.outcome !== 'accepted') return;
    expect(submitted.upstreamId).toMatch(/^text2video:/);
    const { last } = await pollUntilSettled(klingAdapter, ctx, submitted.upstreamId);
    expect(last).toMatchObject({ state: 'succeeded', reportedUsage: { videos: 1, credits: 3.5, seconds: 5 } });
  });

  it('maps business codes: 1301 content policy is final, 1302 rate and 1102 account fail over', async () => {
    expect(await klingAdapter.submit(ctx, videoJob({ prompt: 'p [fake:moderation-early]' }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'content_policy_violation' },
    });
    const rate = await klingAdapter.submit(ctx, videoJob({ prompt: 'p [fake:rate-limit]' }));
    expect(rate).toMatchObject({ outcome: 'refused' });
    expect(rate.outcome === 'refused' ? rate.retryAfterMs : undefined).toBeGreaterThan(0);
    expect(await klingAdapter.submit(ctx, videoJob({ prompt: 'p [fake:quota]' }))).toMatchObject({ outcome: 'refused' });
    expect(await klingAdapter.submit(ctx, videoJob({ prompt: 'p [fake:invalid]' }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'invalid_parameter' },
    });
  });

  it('a wrong secret is the channel’s fault (refused, code 1002), never the request’s', async () => {
    const bad = context('kling-v3', 'wrong');
    expect(await klingAdapter.submit(bad, videoJob({ prompt: 'bad key' }))).toMatchObject({ outcome: 'refused' });
    await bad.close();
  });

  it('reconciles a lost answer by external_task_id; a task never sent is absent', async () => {
    const lost = videoJob({ prompt: 'unit lost [fake:lose-answer]', duration: 5 });
    expect(await klingAdapter.submit(ctx, lost)).toMatchObject({ outcome: 'unknown' });
    const found = await klingAdapter.reconcile?.(ctx, lost);
    expect(found).toMatchObject({ outcome: 'found' });
    expect(await klingAdapter.reconcile?.(ctx, videoJob({ prompt: 'never sent' }))).toEqual({ outcome: 'absent' });
  });

  it('probes with the task list', async () => {
    expect(await klingAdapter.probe(ctx)).toMatchObject({ ok: true });
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MODELS } from '../../src/catalog/index.js';
import { CHANNEL_DEFAULTS, ChannelsConfigError, loadChannelsConfig, parseChannelsConfig } from '../../src/channels/config.js';

const ENV = { DASHSCOPE_API_KEY: 'sk-dash', ARK_API_KEY: 'ark-key', PARTNER_KEY: 'pk' };
const T2V = 'vendora/famw-2.7-t2v';

function faultsOf(doc: unknown, env: Record<string, string> = ENV): readonly string[] {
  try {
    parseChannelsConfig(typeof doc === 'string' ? doc : JSON.stringify(doc), env);
  } catch (err) {
    if (err instanceof ChannelsConfigError) return err.faults;
    throw err;
  }
  return [];
}

const wan = { protocol: 'dashscope', base_url: 'https://dashscope-intl.aliyuncs.com', api_key_env: 'DASHSCOPE_API_KEY' };
const star = { model: '*', to: [{ channel: 'sandbox' }] };

describe('channels file', () => {
  it('the configuration example resolves to ordered targets, with defaults', () => {
    const config = parseChannelsConfig(
      JSON.stringify({
        channels: {
          'wan-intl': { ...wan, max_in_flight: 20, submit_per_s: 2, poll_per_s: 10, timeout_s: 1800 },
          seedance: { protocol: 'ark', base_url: 'https://ark.ap-southeast.bytepluses.com/', api_key_env: 'ARK_API_KEY' },
          partner: { protocol: 'mediagate', base_url: 'https://media.partner.example', api_key_env: 'PARTNER_KEY' },
        },
        routes: [{ model: T2V, to: [{ channel: 'wan-intl', upstream_model: 'wan2.7-t2v' }, { channel: 'partner' }] }, star],
      }),
      ENV,
    );
    expect(config.targetsFor(T2V)).toEqual([
      { channel: 'wan-intl', upstreamModel: 'wan2.7-t2v' },
      { channel: 'partner', upstreamModel: T2V },
    ]);
    for (const row of MODELS) expect(config.isRouted(row.id)).toBe(true);
    const other = MODELS.find((row) => row.id !== T2V)!.id;
    expect(config.targetsFor(other)).toEqual([{ channel: 'sandbox', upstreamModel: other }]);
    const seedance = config.channels.get('seedance')!;
    expect(seedance.baseUrl).toBe('https://ark.ap-southeast.bytepluses.com');
    expect(seedance.apiKey).toBe('ark-key');
    expect(seedance.maxInFlight).toBe(CHANNEL_DEFAULTS.max_in_flight);
    // A key's share while others wait: unset, the fair share (store/slot-share.ts) by default.
    expect(seedance.maxInFlightPerKey).toBeNull();
    expect(config.channels.get('wan-intl')?.maxInFlightPerKey).toBeNull();
    expect(seedance.pollPerS).toBe(CHANNEL_DEFAULTS.poll_per_s);
    expect(config.secrets).toEqual(expect.arrayContaining(['sk-dash', 'ark-key', 'pk']));
  });

  it('a model no route matches is unrouted', () => {
    const config = parseChannelsConfig(JSON.stringify({ channels: { w: wan }, routes: [{ model: T2V, to: [{ channel: 'w' }] }] }), ENV);
    expect(config.isRouted(T2V)).toBe(true);
    expect(config.isRouted(MODELS[MODELS.length - 1]!.id)).toBe(false);
    expect(config.targetsFor('nope')).toEqual([]);
  });

  it('no file: every model to the sandbox', () => {
    const config = loadChannelsConfig(undefined, {});
    for (const row of MODELS) expect(config.targetsFor(row.id)).toEqual([{ channel: 'sandbox', upstreamModel: row.id }]);
  });

  it('an unreadable file is a fault naming it', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'mg-ch-')), 'missing.json');
    expect(() => loadChannelsConfig(path, {})).toThrow(ChannelsConfigError);
    const dir = mkdtempSync(join(tmpdir(), 'mg-ch-'));
    writeFileSync(join(dir, 'c.json'), JSON.stringify({ channels: {}, routes: [star] }));
    expect(loadChannelsConfig(join(dir, 'c.json'), {}).isRouted(T2V)).toBe(true);
  });

  const cases: { name: string; doc: unknown; env?: Record<string, string>; faults: string[] }[] = [
    { name: 'not JSON', doc: '{', faults: [expect.stringMatching(/^\(file\): not valid JSON/)] },
    { name: 'not an object', doc: [], faults: ['(root): must be an object with "channels" and "routes"'] },
    { name: 'unknown top field', doc: { channels: {}, routes: [star], extra: 1 }, faults: ['extra: unknown field'] },
    { name: 'routes missing', doc: { channels: {} }, faults: ['routes: must be an array'] },
    { name: 'channels not an object', doc: { channels: [], routes: [star] }, faults: ['channels: must be an object of named channels'] },
    { name: 'sandbox entry', doc: { channels: { sandbox: wan }, routes: [star] }, faults: ['channels.sandbox: is built in; it takes no entry'] },
    {
      name: 'kling with api_key_env and without its secret key',
      doc: { channels: { k: { protocol: 'kling', api_key_env: 'K', access_key_env: 'K' } }, routes: [star] },
      env: { K: 'x' },
      faults: [
        'channels.k.api_key_env: a kling channel signs with access_key_env and secret_key_env',
        'channels.k.secret_key_env: is required (the name of the environment variable holding the key)',
      ],
    },
    {
      name: 'kling key fields on another protocol',
      doc: { channels: { r: { protocol: 'runway', api_key_env: 'K', secret_key_env: 'K' } }, routes: [star] },
      env: { K: 'x' },
      faults: ['channels.r.secret_key_env: only a kling channel takes it'],
    },
    {
      name: 'bad protocol',
      doc: { channels: { w: { ...wan, protocol: 'sora' } }, routes: [star] },
      faults: [
        'channels.w.protocol: must be one of sandbox, mediagate, dashscope, ark, minimax, pixverse, fal, replicate, gemini, vertex, kling, runway, luma, xai',
      ],
    },
    {
      name: 'literal key',
      doc: { channels: { w: { ...wan, api_key: 'sk-x' } }, routes: [star] },
      faults: ['channels.w.api_key: a key is never written in the file; name its environment variable in api_key_env'],
    },
    { name: 'unknown channel field', doc: { channels: { w: { ...wan, poll_rate: 1 } }, routes: [star] }, faults: ['channels.w.poll_rate: unknown field'] },
    {
      name: 'missing base_url',
      doc: { channels: { w: { protocol: 'ark', api_key_env: 'ARK_API_KEY' } }, routes: [star] },
      faults: ['channels.w.base_url: is required'],
    },
    {
      name: 'ftp base_url',
      doc: { channels: { w: { ...wan, base_url: 'ftp://x' } }, routes: [star] },
      faults: ['channels.w.base_url: must be an http:// or https:// URL'],
    },
    {
      name: 'credentials in base_url',
      doc: { channels: { w: { ...wan, base_url: 'https://u:p@x.example' } }, routes: [star] },
      faults: ["channels.w.base_url: must not hold credentials; name the key's environment variable in api_key_env"],
    },
    {
      name: 'query in base_url',
      doc: { channels: { w: { ...wan, base_url: 'https://x.example/?k=1' } }, routes: [star] },
      faults: ['channels.w.base_url: must not have a query or fragment'],
    },
    {
      name: 'missing api_key_env',
      doc: { channels: { w: { protocol: 'ark', base_url: 'https://x.example' } }, routes: [star] },
      faults: ['channels.w.api_key_env: is required (the name of the environment variable holding the key)'],
    },
    {
      name: 'bad env name',
      doc: { channels: { w: { ...wan, api_key_env: 'sk-123' } }, routes: [star] },
      faults: ['channels.w.api_key_env: must be an environment variable name'],
    },
    {
      name: 'env var unset',
      doc: { channels: { w: wan }, routes: [star] },
      env: {},
      faults: ['channels.w.api_key_env: the environment variable DASHSCOPE_API_KEY is not set'],
    },
    {
      name: 'poll_per_s zero',
      doc: { channels: { 'wan-intl': { ...wan, poll_per_s: 0 } }, routes: [star] },
      faults: ['channels.wan-intl.poll_per_s: must be a positive number'],
    },
    {
      name: 'submit_per_s string',
      doc: { channels: { w: { ...wan, submit_per_s: '2' } }, routes: [star] },
      faults: ['channels.w.submit_per_s: must be a positive number'],
    },
    {
      name: 'max_in_flight fraction',
      doc: { channels: { w: { ...wan, max_in_flight: 1.5 } }, routes: [star] },
      faults: ['channels.w.max_in_flight: must be a positive integer'],
    },
    {
      name: 'max_in_flight_per_key over max_in_flight',
      doc: { channels: { w: { ...wan, max_in_flight: 4, max_in_flight_per_key: 5 } }, routes: [star] },
      faults: ['channels.w.max_in_flight_per_key: must be a positive integer, at most max_in_flight'],
    },
    {
      name: 'timeout_s negative',
      doc: { channels: { w: { ...wan, timeout_s: -1 } }, routes: [star] },
      faults: ['channels.w.timeout_s: must be a positive number'],
    },
    {
      name: 'bad channel name',
      doc: { channels: { 'a b': wan }, routes: [star] },
      faults: ["channels.a b: a channel name is 1-64 letters, digits, '.', '_' or '-'"],
    },
    { name: 'route not object', doc: { channels: {}, routes: [1] }, faults: ['routes[0]: must be an object with "model" and "to"'] },
    {
      name: 'unknown model',
      doc: { channels: {}, routes: [{ model: 'x/y', to: [{ channel: 'sandbox' }] }] },
      faults: ["routes[0].model: no model 'x/y' in the catalog"],
    },
    { name: 'empty to', doc: { channels: {}, routes: [{ model: '*', to: [] }] }, faults: ['routes[0].to: must be a non-empty array of targets'] },
    {
      name: 'unknown channel',
      doc: { channels: {}, routes: [{ model: '*', to: [{ channel: 'nope' }] }] },
      faults: ['routes[0].to[0].channel: no channel \'nope\' (declare it under channels, or use "sandbox")'],
    },
    {
      name: 'duplicate target',
      doc: { channels: {}, routes: [{ model: '*', to: [{ channel: 'sandbox' }, { channel: 'sandbox' }] }] },
      faults: ["routes[0].to[1].channel: 'sandbox' is already a target of this route"],
    },
    {
      name: 'empty upstream_model',
      doc: { channels: {}, routes: [{ model: '*', to: [{ channel: 'sandbox', upstream_model: ' ' }] }] },
      faults: ['routes[0].to[0].upstream_model: must be a non-empty string'],
    },
    {
      name: 'route after *',
      doc: { channels: {}, routes: [star, { model: T2V, to: [{ channel: 'sandbox' }] }] },
      faults: ['routes[1].model: never matched: routes[0] ("*") comes first'],
    },
    {
      name: 'model twice',
      doc: {
        channels: {},
        routes: [
          { model: T2V, to: [{ channel: 'sandbox' }] },
          { model: T2V, to: [{ channel: 'sandbox' }] },
        ],
      },
      faults: [`routes[1].model: never matched: routes[0] routes '${T2V}' first`],
    },
    {
      name: 'several faults at once',
      doc: { channels: { w: { ...wan, poll_per_s: -2, timeout_s: 'x' } }, routes: [{ model: '*', to: [{ channel: 'z' }] }] },
      faults: [
        'channels.w.poll_per_s: must be a positive number',
        'channels.w.timeout_s: must be a positive number',
        'routes[0].to[0].channel: no channel \'z\' (declare it under channels, or use "sandbox")',
      ],
    },
  ];
  it.each(cases)('fault: $name', ({ doc, env, faults }) => {
    expect(faultsOf(doc, env)).toEqual(faults);
  });

  it('the error carries exit code 78 and never the key', () => {
    try {
      parseChannelsConfig(JSON.stringify({ channels: { w: { ...wan, poll_per_s: 0 } }, routes: [star] }), ENV);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ChannelsConfigError);
      expect((err as ChannelsConfigError).exitCode).toBe(78);
      expect(String((err as Error).message)).not.toContain('sk-dash');
    }
  });
});

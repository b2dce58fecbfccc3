/**
 * MEDIAGATE_CHANNELS_FILE (docs/guides/channels.md#configuration): read once at start, validated whole, every
 * fault reported with the JSON path at fault. The caller prints `faults` and exits 78
 * (EX_CONFIG). The result is the routing table: model -> ordered targets.
 *
 * The environment is passed in (src/config.ts owns process.env); the file never holds a secret,
 * only the name of the variable that does.
 */
import { readFileSync } from 'node:fs';
import { allModels, type ModelRow } from '../catalog/index.js';
import { GOOGLE_FIELDS, googleDefaultBaseUrl, parseGoogleFields, type VertexSettings } from './google-config.js';
import { parseProfile, type TargetProfile } from './profiles.js';
import type { ProtocolName } from './protocol.js';
import { parseVendorFields, VENDOR_FIELDS, vendorDefaultBaseUrl, type KlingSettings } from './vendor-config.js';

export const PROTOCOLS: readonly ProtocolName[] = [
  'sandbox',
  'mediagate',
  'dashscope',
  'ark',
  'minimax',
  'pixverse',
  'fal',
  'replicate',
  'gemini',
  'vertex',
  'kling',
  'runway',
  'luma',
  'xai',
];

/** Documented defaults for the optional limits of a channel. */
export const CHANNEL_DEFAULTS = {
  max_in_flight: 10,
  submit_per_s: 2,
  poll_per_s: 10,
  timeout_s: 1800,
} as const;

export const SANDBOX_CHANNEL = 'sandbox';

export interface ChannelConfig {
  readonly name: string;
  readonly protocol: ProtocolName;
  /** Without a trailing slash; '' for the sandbox. */
  readonly baseUrl: string;
  readonly apiKeyEnv: string;
  /** Never logged; '' for the sandbox. */
  readonly apiKey: string;
  readonly maxInFlight: number;
  /**
   * `max_in_flight_per_key`: slots of this channel one API key may fill while another key's task
   * waits for one; null (the default) for the fair share, max_in_flight divided by the keys
   * holding or waiting for a slot, rounded up (store/slot-share.ts). Alone, a key may use them
   * all; set to max_in_flight, no key is held back.
   */
  readonly maxInFlightPerKey: number | null;
  readonly submitPerS: number;
  readonly pollPerS: number;
  readonly timeoutS: number;
  /** A `vertex` channel's project, location and service-account key (google-config.ts). */
  readonly vertex?: VertexSettings;
  /** A `kling` channel's secret key (vendor-config.ts); its access key is `apiKey`. */
  readonly kling?: KlingSettings;
}

export interface RouteTarget {
  readonly channel: string;
  readonly upstreamModel: string;
  /** The target's profile as declared in the file (`to[j].profile`); built-in ones are looked up by profileFor. */
  readonly profile?: TargetProfile;
}

export interface ChannelsConfig {
  /** Every channel, the built-in `sandbox` included. */
  readonly channels: ReadonlyMap<string, ChannelConfig>;
  /** Catalog model id -> ordered targets; a model absent here is unrouted. */
  readonly routes: ReadonlyMap<string, readonly RouteTarget[]>;
  /** False: the model is absent from /v1/models and a create names it `unsupported_value` on `model`. */
  isRouted(model: string): boolean;
  /** Ordered targets of a model; empty when unrouted. */
  targetsFor(model: string): readonly RouteTarget[];
  /** The secrets of all channels, for the log scrubber. */
  readonly secrets: readonly string[];
}

export class ChannelsConfigError extends Error {
  override readonly name = 'ChannelsConfigError';
  readonly exitCode = 78;
  constructor(readonly faults: readonly string[]) {
    super(`invalid channels file:\n  ${faults.join('\n  ')}`);
  }
}

const SANDBOX: ChannelConfig = {
  name: SANDBOX_CHANNEL,
  protocol: 'sandbox',
  baseUrl: '',
  apiKeyEnv: '',
  apiKey: '',
  maxInFlight: Number.MAX_SAFE_INTEGER,
  maxInFlightPerKey: null,
  submitPerS: Number.POSITIVE_INFINITY,
  pollPerS: Number.POSITIVE_INFINITY,
  timeoutS: CHANNEL_DEFAULTS.timeout_s,
};

const CHANNEL_FIELDS = new Set([
  'protocol',
  'base_url',
  'api_key_env',
  'max_in_flight',
  'max_in_flight_per_key',
  'submit_per_s',
  'poll_per_s',
  'timeout_s',
  ...GOOGLE_FIELDS,
  ...VENDOR_FIELDS,
]);
const SECRET_FIELDS = new Set(['api_key', 'apikey', 'key', 'token', 'secret', 'password', 'authorization']);
const CHANNEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

type Env = Readonly<Record<string, string | undefined>>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function routed(channels: Map<string, ChannelConfig>, routes: Map<string, readonly RouteTarget[]>, secrets: string[]): ChannelsConfig {
  return {
    channels,
    routes,
    secrets,
    isRouted: (model) => routes.has(model),
    targetsFor: (model) => routes.get(model) ?? [],
  };
}

/** No file: every model goes to the sandbox, as before channels existed. */
export function defaultChannelsConfig(models: readonly ModelRow[] = allModels()): ChannelsConfig {
  const targets: readonly RouteTarget[] = [];
  const routes = new Map(models.map((row) => [row.id, [...targets, { channel: SANDBOX_CHANNEL, upstreamModel: row.id }]]));
  return routed(new Map([[SANDBOX_CHANNEL, SANDBOX]]), routes, []);
}

function parseChannel(name: string, raw: unknown, env: Env, faults: string[]): ChannelConfig | undefined {
  const at = `channels.${name}`;
  if (name === SANDBOX_CHANNEL) {
    faults.push(`${at}: is built in; it takes no entry`);
    return undefined;
  }
  if (!CHANNEL_NAME.test(name)) faults.push(`${at}: a channel name is 1-64 letters, digits, '.', '_' or '-'`);
  if (!isObject(raw)) {
    faults.push(`${at}: must be an object`);
    return undefined;
  }
  const before = faults.length;
  for (const key of Object.keys(raw)) {
    if (SECRET_FIELDS.has(key.toLowerCase())) {
      faults.push(`${at}.${key}: a key is never written in the file; name its environment variable in api_key_env`);
    } else if (!CHANNEL_FIELDS.has(key)) {
      faults.push(`${at}.${key}: unknown field`);
    }
  }
  const protocol = raw.protocol;
  if (typeof protocol !== 'string' || !(PROTOCOLS as readonly string[]).includes(protocol)) {
    faults.push(`${at}.protocol: must be one of ${PROTOCOLS.join(', ')}`);
  }
  const isSandbox = protocol === 'sandbox';

  let baseUrl = '';
  const defaultBaseUrl = googleDefaultBaseUrl(protocol, raw) ?? vendorDefaultBaseUrl(protocol);
  const vertex = parseGoogleFields(at, protocol, raw, env, faults);
  const kling = parseVendorFields(at, protocol, raw, env, faults);
  if (raw.base_url === undefined) {
    if (defaultBaseUrl !== undefined) baseUrl = defaultBaseUrl;
    else if (!isSandbox && protocol !== 'vertex') faults.push(`${at}.base_url: is required`);
  } else if (typeof raw.base_url !== 'string') {
    faults.push(`${at}.base_url: must be an http:// or https:// URL`);
  } else {
    let url: URL | undefined;
    try {
      url = new URL(raw.base_url);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      faults.push(`${at}.base_url: must be an http:// or https:// URL`);
    } else if (url.username !== '' || url.password !== '') {
      faults.push(`${at}.base_url: must not hold credentials; name the key's environment variable in api_key_env`);
    } else if (url.search !== '' || url.hash !== '') {
      faults.push(`${at}.base_url: must not have a query or fragment`);
    } else {
      baseUrl = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    }
  }

  let apiKeyEnv = '';
  let apiKey = '';
  if (kling !== undefined) {
    apiKeyEnv = kling.accessKeyEnv;
    apiKey = kling.accessKey;
  } else if (raw.api_key_env === undefined) {
    if (!isSandbox && protocol !== 'vertex' && protocol !== 'kling')
      faults.push(`${at}.api_key_env: is required (the name of the environment variable holding the key)`);
  } else if (typeof raw.api_key_env !== 'string' || !ENV_NAME.test(raw.api_key_env)) {
    faults.push(`${at}.api_key_env: must be an environment variable name`);
  } else {
    apiKeyEnv = raw.api_key_env;
    const value = env[apiKeyEnv];
    if (value === undefined || value.trim() === '') faults.push(`${at}.api_key_env: the environment variable ${apiKeyEnv} is not set`);
    else apiKey = value.trim();
  }

  const positive = (field: keyof typeof CHANNEL_DEFAULTS, integer: boolean): number => {
    const value = raw[field];
    if (value === undefined) return CHANNEL_DEFAULTS[field];
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
      faults.push(`${at}.${field}: must be a positive ${integer ? 'integer' : 'number'}`);
      return CHANNEL_DEFAULTS[field];
    }
    return value;
  };
  const maxInFlight = positive('max_in_flight', true);
  const submitPerS = positive('submit_per_s', false);
  const pollPerS = positive('poll_per_s', false);
  const timeoutS = positive('timeout_s', false);
  let maxInFlightPerKey: number | null = null;
  const perKey = raw['max_in_flight_per_key'];
  if (perKey !== undefined) {
    if (typeof perKey !== 'number' || !Number.isInteger(perKey) || perKey <= 0 || perKey > maxInFlight) {
      faults.push(`${at}.max_in_flight_per_key: must be a positive integer, at most max_in_flight`);
    } else maxInFlightPerKey = perKey;
  }
  if (faults.length > before) return undefined;
  return {
    name,
    protocol: protocol as ProtocolName,
    baseUrl,
    apiKeyEnv,
    apiKey,
    maxInFlight,
    maxInFlightPerKey,
    submitPerS,
    pollPerS,
    timeoutS,
    ...(vertex === undefined ? {} : { vertex }),
    ...(kling === undefined ? {} : { kling: kling.kling }),
  };
}

/** Validates the file's text. Throws ChannelsConfigError with every fault found. */
export function parseChannelsConfig(text: string, env: Env, models: readonly ModelRow[] = allModels()): ChannelsConfig {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ChannelsConfigError([`(file): not valid JSON: ${err instanceof Error ? err.message : String(err)}`]);
  }
  if (!isObject(doc)) throw new ChannelsConfigError(['(root): must be an object with "channels" and "routes"']);
  const faults: string[] = [];
  for (const key of Object.keys(doc)) if (key !== 'channels' && key !== 'routes') faults.push(`${key}: unknown field`);

  const channels = new Map<string, ChannelConfig>([[SANDBOX_CHANNEL, SANDBOX]]);
  const declared = new Set<string>([SANDBOX_CHANNEL]);
  if (doc.channels === undefined) {
    // Only the built-in sandbox: valid, if unusual.
  } else if (!isObject(doc.channels)) {
    faults.push('channels: must be an object of named channels');
  } else {
    for (const [name, raw] of Object.entries(doc.channels)) {
      declared.add(name);
      const channel = parseChannel(name, raw, env, faults);
      if (channel !== undefined) channels.set(name, channel);
    }
  }

  const routes = new Map<string, readonly RouteTarget[]>();
  const knownModels = new Set(models.map((row) => row.id));
  if (!Array.isArray(doc.routes)) {
    faults.push('routes: must be an array');
  } else {
    const firstRouteOf = new Map<string, number>();
    let wildcardAt: number | undefined;
    doc.routes.forEach((route: unknown, i: number) => {
      const at = `routes[${i}]`;
      if (!isObject(route)) {
        faults.push(`${at}: must be an object with "model" and "to"`);
        return;
      }
      for (const key of Object.keys(route)) if (key !== 'model' && key !== 'to') faults.push(`${at}.${key}: unknown field`);
      const model = route.model;
      let modelOk = false;
      if (typeof model !== 'string' || model === '') {
        faults.push(`${at}.model: must be a model id or "*"`);
      } else if (model !== '*' && !knownModels.has(model)) {
        faults.push(`${at}.model: no model '${model}' in the catalog`);
      } else if (wildcardAt !== undefined) {
        faults.push(`${at}.model: never matched: routes[${wildcardAt}] ("*") comes first`);
      } else if (model !== '*' && firstRouteOf.has(model)) {
        faults.push(`${at}.model: never matched: routes[${firstRouteOf.get(model) ?? 0}] routes '${model}' first`);
      } else {
        modelOk = true;
        if (model === '*') wildcardAt = i;
        else firstRouteOf.set(model, i);
      }
      const targets: RouteTarget[] = [];
      if (!Array.isArray(route.to) || route.to.length === 0) {
        faults.push(`${at}.to: must be a non-empty array of targets`);
      } else {
        route.to.forEach((target: unknown, j: number) => {
          const tat = `${at}.to[${j}]`;
          if (!isObject(target)) {
            faults.push(`${tat}: must be an object with "channel"`);
            return;
          }
          for (const key of Object.keys(target))
            if (key !== 'channel' && key !== 'upstream_model' && key !== 'profile') faults.push(`${tat}.${key}: unknown field`);
          if (typeof target.channel !== 'string' || !declared.has(target.channel)) {
            faults.push(`${tat}.channel: no channel '${String(target.channel)}' (declare it under channels, or use "sandbox")`);
          } else if (targets.some((t) => t.channel === target.channel)) {
            faults.push(`${tat}.channel: '${target.channel}' is already a target of this route`);
          }
          if (target.upstream_model !== undefined && (typeof target.upstream_model !== 'string' || target.upstream_model.trim() === '')) {
            faults.push(`${tat}.upstream_model: must be a non-empty string`);
          }
          let profile: TargetProfile | undefined;
          const protocol = typeof target.channel === 'string' ? channels.get(target.channel)?.protocol : undefined;
          if (target.profile !== undefined && protocol !== undefined) {
            const upstream = typeof target.upstream_model === 'string' ? target.upstream_model : typeof model === 'string' ? model : '';
            profile = parseProfile(target.profile, `${tat}.profile`, protocol, upstream, faults);
          }
          if (typeof target.channel === 'string') {
            targets.push({
              channel: target.channel,
              upstreamModel: typeof target.upstream_model === 'string' ? target.upstream_model : '',
              ...(profile ? { profile } : {}),
            });
          }
        });
      }
      if (!modelOk || typeof model !== 'string') return;
      const matched = model === '*' ? models.map((row) => row.id).filter((id) => !routes.has(id)) : [model];
      for (const id of matched) {
        routes.set(
          id,
          targets.map((t) => ({ ...t, upstreamModel: t.upstreamModel === '' ? id : t.upstreamModel })),
        );
      }
    });
  }
  if (faults.length > 0) throw new ChannelsConfigError(faults);
  const secrets = [...channels.values()].flatMap((c) => [c.apiKey, c.vertex?.key.privateKey ?? '', c.kling?.secretKey ?? '']).filter((k) => k !== '');
  return routed(channels, routes, secrets);
}

/**
 * The catalog rows a deployment offers: the routed ones, in catalog order. Computed once at start
 * and passed down, so /v1/models, /docs, /openapi.json, the console and validation agree.
 */
export function routedModels(config: ChannelsConfig, models: readonly ModelRow[] = allModels()): readonly ModelRow[] {
  return models.filter((row) => config.isRouted(row.id));
}

/** Reads and validates the file; no path: the default (everything to the sandbox). */
export function loadChannelsConfig(path: string | undefined, env: Env, models: readonly ModelRow[] = allModels()): ChannelsConfig {
  if (path === undefined || path === '') return defaultChannelsConfig(models);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = isObject(err) && typeof err.code === 'string' ? err.code : 'unreadable';
    throw new ChannelsConfigError([`(file): cannot read ${path}: ${code}`]);
  }
  return parseChannelsConfig(text, env, models);
}

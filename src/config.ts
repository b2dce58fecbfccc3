import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import { ConfigError, bool, integer, list, oneOf, path, seconds, type Env } from './config-fields.js';
import { readSlices, type SlicesConfig } from './modules/slices/index.js';

export { ConfigError } from './config-fields.js';

/**
 * The one place that reads the environment. The shared fields (those of the floors, or read by
 * several modules) are documented here (default, unit, variable); each module's own fields are
 * declared in its slice (modules/slices/, `Field`: variable, default, unit, reader) and read once
 * here with the rest. All are in docs/operations/configuration.md. The result is a frozen object
 * passed down explicitly; nothing below this file reads `process.env`. Durations are set in
 * seconds and held in milliseconds (`...Ms`): converted when read (config-fields.ts), once.
 */
export interface Config extends SlicesConfig {
  /** PORT: TCP port of the HTTP server. Default 8080; 0 picks a free port. */
  readonly port: number;
  /** HOST: interface to listen on. Default 127.0.0.1. */
  readonly host: string;
  /** MEDIAGATE_DATA_DIR: database and output files. Default ./data. */
  readonly dataDir: string;
  /** MEDIAGATE_API_KEYS: comma-separated keys accepted in addition to stored ones. */
  readonly apiKeys: readonly string[];
  /** MEDIAGATE_ADMIN_KEYS: comma-separated admin keys (they authorize /v1/admin/* and nothing else; docs/admin.md). */
  readonly adminKeys: readonly string[];
  /** MEDIAGATE_PUBLIC_URL: base of output URLs. Default http://HOST:PORT. */
  readonly publicUrl: string;
  /** Whether MEDIAGATE_PUBLIC_URL was given (else it follows the bound address). */
  readonly publicUrlExplicit: boolean;
  /** MEDIAGATE_CONCURRENCY: tasks rendered at once by this process. Default the CPU count. */
  readonly concurrency: number;
  /** MEDIAGATE_OUTPUT_TTL_S: seconds outputs are kept and their URLs are valid. Default 86400; held in ms. */
  readonly outputTtlMs: number;
  /** MEDIAGATE_TASK_RETENTION_S: seconds a final task is kept after it ended, then deleted with its files. Default 604800 (7 days); held in ms. */
  readonly taskRetentionMs: number;
  /** MEDIAGATE_KEY_INPUT_BYTES: stored input bytes per key over its queued and processing tasks; 0 = no limit. Default 1 GiB. */
  readonly keyInputBytes: number;
  /** MEDIAGATE_BODY_LIMIT_BYTES: largest request body; larger ones get 413. Default 32 MiB. */
  readonly bodyLimitBytes: number;
  /** MEDIAGATE_FINAL_BODY_CACHE_BYTES: bytes of serialized final task bodies kept per process for status polls; 0 turns it off. Default 16 MiB. */
  readonly finalBodyCacheBytes: number;
  /** MEDIAGATE_LEASE_S: seconds a worker owns a task without a heartbeat. Default 15; held in ms. */
  readonly leaseMs: number;
  /** MEDIAGATE_MAX_ATTEMPTS: times a task is started before a lost worker fails it. Default 3. */
  readonly maxAttempts: number;
  /** MEDIAGATE_RENDER_TIMEOUT_S: longest a single render may take, in seconds. Default 600; held in ms. */
  readonly renderTimeoutMs: number;
  /** MEDIAGATE_SWEEP_INTERVAL_S: how often expired outputs are deleted, in seconds. Default 60; held in ms. */
  readonly sweepIntervalMs: number;
  /** MEDIAGATE_SSE_KEEPALIVE_S: the longest an event stream stays silent (a comment line), in seconds. Default 15; held in ms. */
  readonly sseKeepAliveMs: number;
  /** MEDIAGATE_SSE_MAX_PER_KEY: event streams one API key may hold open in one API process (429 past it). Default 100. */
  readonly sseMaxPerKey: number;
  /** MEDIAGATE_SSE_MAX_LIFETIME_S: longest an event stream stays open before it ends (the client reconnects with Last-Event-ID), in seconds. Default 1800; held in ms. */
  readonly sseMaxLifetimeMs: number;
  /** MEDIAGATE_SYNCHRONOUS: SQLite `synchronous` pragma, NORMAL (survives process crashes) or FULL (also power loss). */
  readonly sqliteSynchronous: 'NORMAL' | 'FULL';
  /** MEDIAGATE_SQLITE_CACHE_MB: SQLite page cache of this process, in MiB. Default 64. */
  readonly sqliteCacheMb: number;
  /** LOG_LEVEL: pino level. Default info. */
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** LOG_FORMAT: `json`, `pretty` (for a person), or `auto` (pretty when stdout is a terminal). Default auto. */
  readonly logFormat: 'json' | 'pretty' | 'auto';
  /** MEDIAGATE_WORKERS: run the worker pool in this process (false for an API-only process). */
  readonly workers: boolean;
  /** DATABASE_URL: `postgres://...` puts the task store and the job queue on PostgreSQL (scale-out). Default unset: embedded SQLite. */
  readonly databaseUrl: string | undefined;
  /** MEDIAGATE_PG_POOL_SIZE: PostgreSQL connections per process at most. Default 10. */
  readonly pgPoolSize: number;
  /**
   * MEDIAGATE_PG_LOCAL_QUEUE: queue jobs a worker process fetches and locks at once; 1 = one per
   * free slot. Undefined when unset: the job source picks it (sources/graphile.ts, localQueueSize).
   */
  readonly pgLocalQueue: number | undefined;
  /** MEDIAGATE_DRAIN_S: at SIGTERM, seconds running renders get to finish before they are handed back. Default 10; held in ms. */
  readonly drainMs: number;
  /** MEDIAGATE_FETCH_ALLOW_HOSTS: host names fetched even when they resolve to non-public addresses. Default none. */
  readonly fetchAllowHosts: readonly string[];
  /** MEDIAGATE_FETCH_ALLOW_PRIVATE: `true` (every address) or CIDR ranges media fetches may reach. Default false. */
  readonly fetchAllowPrivate: boolean | readonly string[];
  /** MEDIAGATE_RATE_LIMIT_PER_MIN: requests per minute per API key (per process); 0 = off. Default 60000. */
  readonly rateLimitPerMin: number;
  /** MEDIAGATE_MAX_TASKS_IN_FLIGHT: queued + processing tasks per API key; 0 = off. Default 5000. */
  readonly maxTasksInFlight: number;
  /** MEDIAGATE_JSON_MAX_DEPTH: deepest nesting of arrays/objects in a body. Default 32. */
  readonly jsonMaxDepth: number;
  /** MEDIAGATE_JSON_MAX_ITEMS: most items in one array, or members in one object. Default 1000. */
  readonly jsonMaxItems: number;
  /** MEDIAGATE_JSON_MAX_STRING_BYTES: longest string that is not a data URL (data URLs: the body cap). Default 1 MiB. */
  readonly jsonMaxStringBytes: number;
  /** MEDIAGATE_CORS_ORIGINS: origins (scheme://host[:port]) or `*` allowed to call the API from a browser. Default none (CORS off). */
  readonly corsOrigins: readonly string[] | '*';
  /**
   * MEDIAGATE_CHANNELS_FILE: JSON file routing models to upstream channels
   * (docs/guides/channels.md), as an absolute path. Default unset: every model to the sandbox. Read
   * and validated once at start: by the CLI (src/cli/serve.ts, `readChannels`, which reports a bad
   * file and passes the table as `options.channels`), else by the factory itself.
   */
  readonly channelsFile: string | undefined;
  /**
   * MEDIAGATE_MODELS_FILE: JSON file of declared models (docs/guides/models.md), as an absolute
   * path. Default unset: the built-in models only. Read and checked once at start, before the
   * channels and pricing files (which may name its ids).
   */
  readonly modelsFile: string | undefined;
  /** MEDIAGATE_HEADERS_TIMEOUT_S: the request's header block must arrive within this. Default 10; held in ms. */
  readonly headersTimeoutMs: number;
  /** MEDIAGATE_REQUEST_TIMEOUT_S: the whole request, body included, must arrive within this. Default 120; held in ms. */
  readonly requestTimeoutMs: number;
  /** MEDIAGATE_MAX_CONNECTIONS: open HTTP connections per process at most. Default 10000. */
  readonly maxConnections: number;
  /** MEDIAGATE_MAX_HEADER_BYTES: largest request header block; larger ones get 431. Default 16384. */
  readonly maxHeaderBytes: number;
  /** MEDIAGATE_STORAGE and MEDIAGATE_S3_*: where media (outputs, stored and published inputs) live. Default the data directory. */
  readonly storage: StorageConfig;
  /** MEDIAGATE_OUTPUT_URLS: `proxy` (signed `/files` URLs of the service) or `presigned` (the store's own URLs; S3 only). Default proxy. */
  readonly outputUrls: 'proxy' | 'presigned';
}

/** The media store: the data directory, or an S3-compatible bucket (docs/operations/scaling-out.md). */
export type StorageConfig =
  | { readonly kind: 'local' }
  | {
      readonly kind: 's3';
      /** MEDIAGATE_S3_BUCKET: required; a bucket that does not exist is a start-up fault. */
      readonly bucket: string;
      /** MEDIAGATE_S3_PREFIX: key prefix inside the bucket, `''` or ending with `/`. Default empty. */
      readonly prefix: string;
      /** MEDIAGATE_S3_ENDPOINT: the store's URL (Ceph, MinIO...). Default unset: AWS for the region. */
      readonly endpoint: string | undefined;
      /** MEDIAGATE_S3_REGION: default us-east-1. */
      readonly region: string;
      /** MEDIAGATE_S3_PATH_STYLE: `<endpoint>/<bucket>/<key>` addressing. Default false. */
      readonly pathStyle: boolean;
      /** AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN: from the environment only, never a file. */
      readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken: string | undefined };
    };

/** `false` (default), `true`, or a list of CIDR ranges checked here so a typo stops the start. */
function allowPrivate(env: Env): boolean | readonly string[] {
  const raw = env['MEDIAGATE_FETCH_ALLOW_PRIVATE']?.trim().toLowerCase() ?? '';
  if (['', '0', 'false', 'no', 'off'].includes(raw)) return false;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  const ranges = list(env, 'MEDIAGATE_FETCH_ALLOW_PRIVATE');
  for (const range of ranges) {
    if (!ipaddr.isValidCIDR(range)) {
      throw new ConfigError(`MEDIAGATE_FETCH_ALLOW_PRIVATE must be true, false or CIDR ranges (10.0.0.0/8,fd00::/8), got '${range}'.`);
    }
  }
  return ranges;
}

/** `*`, or exact origins checked here so a typo (a path, a trailing slash) stops the start. */
function corsOrigins(env: Env): readonly string[] | '*' {
  const origins = list(env, 'MEDIAGATE_CORS_ORIGINS');
  if (origins.length === 1 && origins[0] === '*') return '*';
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.origin !== origin) {
      throw new ConfigError(`MEDIAGATE_CORS_ORIGINS must be * or origins such as https://app.example.com (no path or trailing slash), got '${origin}'.`);
    }
  }
  return origins;
}

/** A PostgreSQL connection string, or undefined; the value is never echoed (it may hold a password). */
function databaseUrl(env: Env): string | undefined {
  const raw = env['DATABASE_URL']?.trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('DATABASE_URL must be a URL such as postgres://user:password@host:5432/mediagate.');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(`DATABASE_URL must start with postgres:// or postgresql://, got '${url.protocol}//'.`);
  }
  return raw;
}

function publicUrl(env: Env, host: string, port: number): string {
  const raw = env['MEDIAGATE_PUBLIC_URL']?.trim();
  if (!raw) {
    const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    return `http://${shown}:${port}`;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`MEDIAGATE_PUBLIC_URL must be an absolute http(s) URL, got '${raw}'.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`MEDIAGATE_PUBLIC_URL must use http or https, got '${raw}'.`);
  }
  return raw.replace(/\/+$/, '');
}

/** A comma-separated list of keys: each 8-256 printable ASCII characters without spaces. */
function keyList(env: Env, name: string): string[] {
  const keys = (env[name] ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key !== '');
  for (const key of keys) {
    if (!/^[\x21-\x7e]{8,256}$/.test(key)) {
      throw new ConfigError(`${name}: each key must be 8-256 printable ASCII characters without spaces.`);
    }
  }
  return keys;
}

function required(env: Env, name: string, why: string): string {
  const value = env[name]?.trim();
  if (!value) throw new ConfigError(`${name} is required ${why}.`);
  return value;
}

function storageConfig(env: Env): StorageConfig {
  const kind = oneOf(env, 'MEDIAGATE_STORAGE', ['local', 's3'] as const, 'local');
  if (kind === 'local') return { kind };
  const why = 'with MEDIAGATE_STORAGE=s3';
  const bucket = required(env, 'MEDIAGATE_S3_BUCKET', why);
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new ConfigError(`MEDIAGATE_S3_BUCKET must be an S3 bucket name (3-63 of a-z 0-9 . -), got '${bucket}'.`);
  const rawPrefix = env['MEDIAGATE_S3_PREFIX']?.trim().replace(/^\/+|\/+$/g, '') ?? '';
  if (rawPrefix !== '' && !/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/.test(rawPrefix)) {
    throw new ConfigError(`MEDIAGATE_S3_PREFIX must be /-separated segments of A-Z a-z 0-9 _ -, got '${rawPrefix}'.`);
  }
  const rawEndpoint = env['MEDIAGATE_S3_ENDPOINT']?.trim() || undefined;
  if (rawEndpoint !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(rawEndpoint);
    } catch {
      url = undefined;
    }
    if (!url || !['http:', 'https:'].includes(url.protocol) || url.username !== '' || url.search !== '') {
      throw new ConfigError(`MEDIAGATE_S3_ENDPOINT must be an http(s) URL without credentials or query, got '${rawEndpoint}'.`);
    }
  }
  const region = env['MEDIAGATE_S3_REGION']?.trim() || 'us-east-1';
  if (!/^[a-z0-9-]{1,64}$/.test(region)) throw new ConfigError(`MEDIAGATE_S3_REGION must be a region name such as us-east-1, got '${region}'.`);
  return {
    kind,
    bucket,
    prefix: rawPrefix === '' ? '' : `${rawPrefix}/`,
    endpoint: rawEndpoint?.replace(/\/$/, ''),
    region,
    pathStyle: bool(env, 'MEDIAGATE_S3_PATH_STYLE', false),
    credentials: {
      accessKeyId: required(env, 'AWS_ACCESS_KEY_ID', why),
      secretAccessKey: required(env, 'AWS_SECRET_ACCESS_KEY', why),
      sessionToken: env['AWS_SESSION_TOKEN']?.trim() || undefined,
    },
  };
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = env['HOST']?.trim() || '127.0.0.1';
  const apiKeys = keyList(env, 'MEDIAGATE_API_KEYS');
  const adminKeys = keyList(env, 'MEDIAGATE_ADMIN_KEYS');
  // One key, one role: a key in both lists would be an admin key and a client key at once.
  if (adminKeys.some((key) => apiKeys.includes(key))) {
    throw new ConfigError('MEDIAGATE_ADMIN_KEYS: a key must not also be in MEDIAGATE_API_KEYS (an admin key is refused on client operations).');
  }
  const concurrency = integer(env, 'MEDIAGATE_CONCURRENCY', availableParallelism(), 1, 256);
  const config: Config = {
    port,
    host,
    dataDir: resolve(env['MEDIAGATE_DATA_DIR']?.trim() || './data'),
    apiKeys,
    adminKeys,
    publicUrl: publicUrl(env, host, port),
    publicUrlExplicit: Boolean(env['MEDIAGATE_PUBLIC_URL']?.trim()),
    concurrency,
    outputTtlMs: seconds(env, 'MEDIAGATE_OUTPUT_TTL_S', 86_400, 1, 10 * 365 * 86_400),
    taskRetentionMs: seconds(env, 'MEDIAGATE_TASK_RETENTION_S', 7 * 86_400, 1, 10 * 365 * 86_400),
    keyInputBytes: integer(env, 'MEDIAGATE_KEY_INPUT_BYTES', 1024 * 1024 * 1024, 0, 1024 ** 4),
    bodyLimitBytes: integer(env, 'MEDIAGATE_BODY_LIMIT_BYTES', 32 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    finalBodyCacheBytes: integer(env, 'MEDIAGATE_FINAL_BODY_CACHE_BYTES', 16 * 1024 * 1024, 0, 16 * 1024 * 1024 * 1024),
    leaseMs: seconds(env, 'MEDIAGATE_LEASE_S', 15, 2, 3600),
    maxAttempts: integer(env, 'MEDIAGATE_MAX_ATTEMPTS', 3, 1, 100),
    renderTimeoutMs: seconds(env, 'MEDIAGATE_RENDER_TIMEOUT_S', 600, 1, 86_400),
    sweepIntervalMs: seconds(env, 'MEDIAGATE_SWEEP_INTERVAL_S', 60, 1, 86_400),
    sseKeepAliveMs: seconds(env, 'MEDIAGATE_SSE_KEEPALIVE_S', 15, 1, 15),
    sseMaxPerKey: integer(env, 'MEDIAGATE_SSE_MAX_PER_KEY', 100, 1, 100_000),
    sseMaxLifetimeMs: seconds(env, 'MEDIAGATE_SSE_MAX_LIFETIME_S', 1800, 1, 86_400),
    sqliteSynchronous: oneOf(env, 'MEDIAGATE_SYNCHRONOUS', ['NORMAL', 'FULL'] as const, 'NORMAL'),
    sqliteCacheMb: integer(env, 'MEDIAGATE_SQLITE_CACHE_MB', 64, 2, 65_536),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT', ['json', 'pretty', 'auto'] as const, 'auto'),
    workers: bool(env, 'MEDIAGATE_WORKERS', true),
    databaseUrl: databaseUrl(env),
    pgPoolSize: integer(env, 'MEDIAGATE_PG_POOL_SIZE', 10, 4, 1000),
    pgLocalQueue: env['MEDIAGATE_PG_LOCAL_QUEUE']?.trim() ? integer(env, 'MEDIAGATE_PG_LOCAL_QUEUE', concurrency, 1, 10_000) : undefined,
    drainMs: seconds(env, 'MEDIAGATE_DRAIN_S', 10, 0, 3600),
    fetchAllowHosts: list(env, 'MEDIAGATE_FETCH_ALLOW_HOSTS').map((host) => host.toLowerCase()),
    fetchAllowPrivate: allowPrivate(env),
    rateLimitPerMin: integer(env, 'MEDIAGATE_RATE_LIMIT_PER_MIN', 60_000, 0, 100_000_000),
    maxTasksInFlight: integer(env, 'MEDIAGATE_MAX_TASKS_IN_FLIGHT', 5000, 0, 100_000_000),
    jsonMaxDepth: integer(env, 'MEDIAGATE_JSON_MAX_DEPTH', 32, 4, 1000),
    jsonMaxItems: integer(env, 'MEDIAGATE_JSON_MAX_ITEMS', 1000, 10, 10_000_000),
    jsonMaxStringBytes: integer(env, 'MEDIAGATE_JSON_MAX_STRING_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024),
    corsOrigins: corsOrigins(env),
    channelsFile: path(env, 'MEDIAGATE_CHANNELS_FILE'),
    modelsFile: path(env, 'MEDIAGATE_MODELS_FILE'),
    headersTimeoutMs: seconds(env, 'MEDIAGATE_HEADERS_TIMEOUT_S', 10, 1, 3600),
    requestTimeoutMs: seconds(env, 'MEDIAGATE_REQUEST_TIMEOUT_S', 120, 1, 86_400),
    maxConnections: integer(env, 'MEDIAGATE_MAX_CONNECTIONS', 10_000, 1, 1_000_000),
    maxHeaderBytes: integer(env, 'MEDIAGATE_MAX_HEADER_BYTES', 16 * 1024, 1024, 1024 * 1024),
    storage: storageConfig(env),
    outputUrls: oneOf(env, 'MEDIAGATE_OUTPUT_URLS', ['proxy', 'presigned'] as const, 'proxy'),
    ...readSlices(env),
  };
  if (config.outputUrls === 'presigned' && config.storage.kind !== 's3') {
    throw new ConfigError('MEDIAGATE_OUTPUT_URLS=presigned needs MEDIAGATE_STORAGE=s3 (the data directory has no URLs of its own).');
  }
  // S3 presigned URLs live 7 days at most.
  if (config.outputUrls === 'presigned' && config.outputTtlMs > 7 * 86_400_000) {
    throw new ConfigError(
      'MEDIAGATE_OUTPUT_TTL_S must be at most 604800 (7 days) with MEDIAGATE_OUTPUT_URLS=presigned: S3 presigned URLs live 7 days at most.',
    );
  }
  // Node refuses a header timeout longer than the request timeout.
  if (config.requestTimeoutMs < config.headersTimeoutMs) {
    throw new ConfigError('MEDIAGATE_REQUEST_TIMEOUT_S must be at least MEDIAGATE_HEADERS_TIMEOUT_S.');
  }
  return Object.freeze({ ...config, ...overrides });
}

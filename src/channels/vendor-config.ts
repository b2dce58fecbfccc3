/**
 * The channel fields of the `kling`, `runway`, `luma` and `xai` protocols
 * (docs/guides/channels.md#configuration), read beside the common ones by config.ts:
 * - every one of them has a default `base_url` (the provider's public API host);
 * - `kling` signs its own tokens (https://app.klingai.com/global/dev/document-api/apiReference/commonInfo):
 *   `access_key_env` and `secret_key_env` name the variables holding the access key (the JWT's
 *   `iss`) and the secret key (its HS256 key); it takes no `api_key_env`;
 * - `runway`, `luma` and `xai` take `api_key_env` like the first protocols.
 */

export interface KlingSettings {
  readonly secretKeyEnv: string;
  /** Never logged, never in an outcome: only kling-auth.ts reads it, to sign. */
  readonly secretKey: string;
}

export const VENDOR_FIELDS = ['access_key_env', 'secret_key_env'] as const;

/** Public hosts: Kling's global API, Runway's developer API, Luma's Dream Machine API, xAI's API. */
const DEFAULT_BASE_URLS: Readonly<Record<string, string>> = {
  kling: 'https://api-singapore.klingai.com',
  runway: 'https://api.dev.runwayml.com',
  luma: 'https://api.lumalabs.ai',
  xai: 'https://api.x.ai',
};

export function vendorDefaultBaseUrl(protocol: unknown): string | undefined {
  return typeof protocol === 'string' ? DEFAULT_BASE_URLS[protocol] : undefined;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
type Env = Readonly<Record<string, string | undefined>>;

function secretFrom(at: string, field: string, raw: Readonly<Record<string, unknown>>, env: Env, faults: string[]): { env: string; value: string } | undefined {
  const name = raw[field];
  if (name === undefined) {
    faults.push(`${at}.${field}: is required (the name of the environment variable holding the key)`);
    return undefined;
  }
  if (typeof name !== 'string' || !ENV_NAME.test(name)) {
    faults.push(`${at}.${field}: must be an environment variable name`);
    return undefined;
  }
  const value = env[name];
  if (value === undefined || value.trim() === '') {
    faults.push(`${at}.${field}: the environment variable ${name} is not set`);
    return undefined;
  }
  return { env: name, value: value.trim() };
}

/**
 * Checks the Kling fields of one channel. For a `kling` channel: the access key (returned as the
 * channel's key, so it is redacted and shown like any other) and the secret key.
 */
export function parseVendorFields(
  at: string,
  protocol: unknown,
  raw: Readonly<Record<string, unknown>>,
  env: Env,
  faults: string[],
): { accessKeyEnv: string; accessKey: string; kling: KlingSettings } | undefined {
  if (protocol !== 'kling') {
    for (const name of VENDOR_FIELDS) if (raw[name] !== undefined) faults.push(`${at}.${name}: only a kling channel takes it`);
    return undefined;
  }
  if (raw['api_key_env'] !== undefined) faults.push(`${at}.api_key_env: a kling channel signs with access_key_env and secret_key_env`);
  const access = secretFrom(at, 'access_key_env', raw, env, faults);
  const secret = secretFrom(at, 'secret_key_env', raw, env, faults);
  if (access === undefined || secret === undefined) return undefined;
  return { accessKeyEnv: access.env, accessKey: access.value, kling: { secretKeyEnv: secret.env, secretKey: secret.value } };
}

/**
 * The channel fields of the two Google protocols (docs/guides/channels.md#configuration), read
 * beside the common ones by config.ts:
 * - `gemini`: `api_key_env` (the `x-goog-api-key`); `base_url` defaults to the Gemini API's host.
 * - `vertex`: `project`, `location`, `credentials_file_env` (a variable holding the path of a
 *   service-account JSON key); no `api_key_env`; `base_url` defaults to the regional Vertex AI
 *   host (https://cloud.google.com/vertex-ai/docs/reference/rest#service-endpoint: `global` has
 *   no region prefix).
 * The key file is read and checked at start, so a missing or malformed key stops the process
 * (exit 78) instead of failing every task later. Its private key never leaves this process.
 */
import { readFileSync } from 'node:fs';

/** The fields of a service-account key file the JWT-bearer grant needs (https://google.aip.dev/auth/4112). */
export interface ServiceAccountKey {
  readonly clientEmail: string;
  readonly privateKey: string;
  readonly privateKeyId: string;
  /** Where the grant is sent: the key file says so (oauth2.googleapis.com for real keys). */
  readonly tokenUri: string;
}

export interface VertexSettings {
  readonly project: string;
  readonly location: string;
  readonly credentialsFileEnv: string;
  readonly key: ServiceAccountKey;
}

export const GOOGLE_FIELDS = ['project', 'location', 'credentials_file_env'] as const;

export const GEMINI_DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';

export function vertexDefaultBaseUrl(location: string): string {
  return location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`;
}

/** The default base_url of a Google protocol, or undefined for the others (their base_url is required). */
export function googleDefaultBaseUrl(protocol: unknown, raw: Readonly<Record<string, unknown>>): string | undefined {
  if (protocol === 'gemini') return GEMINI_DEFAULT_BASE_URL;
  if (protocol === 'vertex' && typeof raw['location'] === 'string' && LOCATION.test(raw['location'])) return vertexDefaultBaseUrl(raw['location']);
  return undefined;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A Google Cloud project id (6-30 lower-case letters, digits, hyphens) or number. */
const PROJECT = /^([a-z][a-z0-9-]{4,28}[a-z0-9]|[0-9]{1,20})$/;
const LOCATION = /^[a-z]+(-[a-z0-9]+)*$/;

type Env = Readonly<Record<string, string | undefined>>;

/** Parses a service-account key file's text; the fault, or the key. */
export function parseServiceAccountKey(text: string): ServiceAccountKey | string {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return 'is not valid JSON';
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return 'is not a JSON object';
  const record = doc as Record<string, unknown>;
  if (record['type'] !== 'service_account') return 'is not a service-account key ("type": "service_account")';
  const field = (name: string): string | undefined => (typeof record[name] === 'string' && record[name] !== '' ? record[name] : undefined);
  const clientEmail = field('client_email');
  const privateKey = field('private_key');
  const tokenUri = field('token_uri');
  if (clientEmail === undefined) return 'has no client_email';
  if (privateKey === undefined || !privateKey.includes('PRIVATE KEY')) return 'has no PEM private_key';
  if (tokenUri === undefined || !/^https?:\/\//.test(tokenUri)) return 'has no http(s) token_uri';
  try {
    new URL(tokenUri);
  } catch {
    return 'has an invalid token_uri';
  }
  return { clientEmail, privateKey, privateKeyId: field('private_key_id') ?? '', tokenUri };
}

/**
 * Checks the Google fields of one channel (its other fields are config.ts's). Pushes faults with
 * the JSON path; returns the Vertex settings for a valid `vertex` channel.
 */
export function parseGoogleFields(
  at: string,
  protocol: unknown,
  raw: Readonly<Record<string, unknown>>,
  env: Env,
  faults: string[],
): VertexSettings | undefined {
  if (protocol !== 'vertex') {
    for (const name of GOOGLE_FIELDS) if (raw[name] !== undefined) faults.push(`${at}.${name}: only a vertex channel takes it`);
    return undefined;
  }
  if (raw['api_key_env'] !== undefined) faults.push(`${at}.api_key_env: a vertex channel authenticates with credentials_file_env (a service-account key)`);
  const project = raw['project'];
  const location = raw['location'];
  const fileEnv = raw['credentials_file_env'];
  const before = faults.length;
  if (typeof project !== 'string' || !PROJECT.test(project)) faults.push(`${at}.project: is required (the Google Cloud project id)`);
  if (typeof location !== 'string' || !LOCATION.test(location)) faults.push(`${at}.location: is required (a region such as us-central1)`);
  let key: ServiceAccountKey | undefined;
  if (typeof fileEnv !== 'string' || !ENV_NAME.test(fileEnv)) {
    faults.push(`${at}.credentials_file_env: is required (the environment variable holding the path of a service-account JSON key)`);
  } else {
    const path = env[fileEnv];
    if (path === undefined || path.trim() === '') faults.push(`${at}.credentials_file_env: the environment variable ${fileEnv} is not set`);
    else {
      let text: string | undefined;
      try {
        text = readFileSync(path.trim(), 'utf8');
      } catch (err) {
        const code = typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : 'unreadable';
        faults.push(`${at}.credentials_file_env: cannot read the file named by ${fileEnv}: ${code}`);
      }
      if (text !== undefined) {
        const parsed = parseServiceAccountKey(text);
        if (typeof parsed === 'string') faults.push(`${at}.credentials_file_env: the file named by ${fileEnv} ${parsed}`);
        else key = parsed;
      }
    }
  }
  if (faults.length > before || key === undefined || typeof project !== 'string' || typeof location !== 'string' || typeof fileEnv !== 'string')
    return undefined;
  return { project, location, credentialsFileEnv: fileEnv, key };
}

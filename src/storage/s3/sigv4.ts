/**
 * AWS Signature Version 4 for S3, on node:crypto: the header signature of a request and the
 * query signature of a presigned URL. Written here rather than taken from a package: the SDK is
 * large, and the small signers sign `fetch` Requests, which this project does not make
 * (docs/decisions/006-s3-signer-with-node-crypto.md). Specified by AWS's "Signature Version 4
 * signing process"; checked against AWS's worked examples (test/s3-sigv4.test.ts) and a real
 * S3 server (test/s3-storage.test.ts).
 */
import { createHash, createHmac } from 'node:crypto';

export interface S3Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
}

/** The payload hash of a body not hashed ahead (streamed uploads and every GET). */
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

const ALGORITHM = 'AWS4-HMAC-SHA256';

/** RFC 3986 percent-encoding, as SigV4 wants it: everything but A-Z a-z 0-9 - _ . ~ */
export function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The canonical path: each segment encoded once (S3 does not double-encode). */
function canonicalPath(url: URL): string {
  return url.pathname
    .split('/')
    .map((segment) => uriEncode(decodeURIComponent(segment)))
    .join('/');
}

function canonicalQuery(params: [string, string][]): string {
  return params
    .map(([key, value]) => [uriEncode(key), uriEncode(value)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
}

const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest();
const sha256Hex = (data: string): string => createHash('sha256').update(data, 'utf8').digest('hex');

/** `20261126T021500Z` and `20261126`. */
function stamps(at: Date): { amzDate: string; day: string } {
  const amzDate = at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  return { amzDate, day: amzDate.slice(0, 8) };
}

interface Signing {
  readonly method: string;
  readonly url: URL;
  /** Lower-case names; `host` is added. */
  readonly headers: Record<string, string>;
  readonly query: [string, string][];
  readonly payloadHash: string;
  readonly credentials: S3Credentials;
  readonly region: string;
  readonly amzDate: string;
  readonly day: string;
}

function signature(signing: Signing): { signature: string; signedHeaders: string; scope: string } {
  const headers: Record<string, string> = { ...signing.headers, host: signing.url.host };
  const names = Object.keys(headers).sort();
  const signedHeaders = names.join(';');
  const canonical = [
    signing.method,
    canonicalPath(signing.url),
    canonicalQuery(signing.query),
    names.map((name) => `${name}:${(headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`).join(''),
    signedHeaders,
    signing.payloadHash,
  ].join('\n');
  const scope = `${signing.day}/${signing.region}/s3/aws4_request`;
  const toSign = [ALGORITHM, signing.amzDate, scope, sha256Hex(canonical)].join('\n');
  let key = hmac(`AWS4${signing.credentials.secretAccessKey}`, signing.day);
  for (const part of [signing.region, 's3', 'aws4_request']) key = hmac(key, part);
  return { signature: createHmac('sha256', key).update(toSign, 'utf8').digest('hex'), signedHeaders, scope };
}

/**
 * The headers that sign a request (`authorization`, `x-amz-date`, `x-amz-content-sha256`, and
 * the session token), to send with `headers` (lower-case names, all signed).
 */
export function signHeaders(request: {
  readonly method: string;
  readonly url: URL;
  readonly headers: Record<string, string>;
  readonly payloadHash: string;
  readonly credentials: S3Credentials;
  readonly region: string;
  readonly now?: Date;
}): Record<string, string> {
  const { amzDate, day } = stamps(request.now ?? new Date());
  const headers: Record<string, string> = {
    ...request.headers,
    'x-amz-date': amzDate,
    'x-amz-content-sha256': request.payloadHash,
    ...(request.credentials.sessionToken === undefined ? {} : { 'x-amz-security-token': request.credentials.sessionToken }),
  };
  const query = [...request.url.searchParams.entries()];
  const signed = signature({ ...request, headers, query, amzDate, day });
  return {
    ...headers,
    authorization: `${ALGORITHM} Credential=${request.credentials.accessKeyId}/${signed.scope}, SignedHeaders=${signed.signedHeaders}, Signature=${signed.signature}`,
  };
}

/**
 * A presigned GET URL: valid from `signedAt` for `expiresS` seconds (at most 7 days, S3's
 * limit). `url` may carry `response-*` parameters, which are signed with the rest.
 */
export function presignGet(request: {
  readonly url: URL;
  readonly credentials: S3Credentials;
  readonly region: string;
  readonly signedAt: Date;
  readonly expiresS: number;
}): string {
  const { amzDate, day } = stamps(request.signedAt);
  const url = new URL(request.url);
  const params: [string, string][] = [
    ...url.searchParams.entries(),
    ['X-Amz-Algorithm', ALGORITHM],
    ['X-Amz-Credential', `${request.credentials.accessKeyId}/${day}/${request.region}/s3/aws4_request`],
    ['X-Amz-Date', amzDate],
    ['X-Amz-Expires', String(request.expiresS)],
    ['X-Amz-SignedHeaders', 'host'],
    ...(request.credentials.sessionToken === undefined ? [] : ([['X-Amz-Security-Token', request.credentials.sessionToken]] as [string, string][])),
  ];
  const signed = signature({
    method: 'GET',
    url,
    headers: {},
    query: params,
    payloadHash: UNSIGNED_PAYLOAD,
    credentials: request.credentials,
    region: request.region,
    amzDate,
    day,
  });
  url.search = `${canonicalQuery(params)}&X-Amz-Signature=${signed.signature}`;
  return url.toString();
}

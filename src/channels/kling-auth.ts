/**
 * Kling's API token (https://app.klingai.com/global/dev/document-api/apiReference/commonInfo,
 * "API authentication"): a JWT signed HS256 with the secret key, header `{alg: "HS256", typ: "JWT"}`,
 * claims `{iss: <access key>, exp: now + 1800, nbf: now - 5}`, sent as `Authorization: Bearer <jwt>`.
 * One token per channel, signed again once less than five minutes of it are left, so a request
 * never leaves with a token that expires on the way.
 */
import { createHmac } from 'node:crypto';

const LIFETIME_S = 1800;
const SKEW_S = 5;
const RENEW_BEFORE_S = 300;

const b64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

/** A signed token for this instant (seconds since the epoch). */
export function klingJwt(accessKey: string, secretKey: string, nowS: number): string {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = b64url(JSON.stringify({ iss: accessKey, exp: nowS + LIFETIME_S, nbf: nowS - SKEW_S }));
  const signature = createHmac('sha256', secretKey).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${signature}`;
}

export interface KlingTokenSource {
  /** The current token, renewed shortly before it expires; never logged. */
  token(): string;
}

export function createKlingTokenSource(accessKey: string, secretKey: string, now: () => number = Date.now): KlingTokenSource {
  let cached: { jwt: string; expS: number } | undefined;
  return {
    token() {
      const nowS = Math.floor(now() / 1000);
      if (cached === undefined || cached.expS - nowS < RENEW_BEFORE_S) cached = { jwt: klingJwt(accessKey, secretKey, nowS), expS: nowS + LIFETIME_S };
      return cached.jwt;
    },
  };
}

/**
 * Access tokens for a `vertex` channel: the OAuth 2.0 JWT-bearer grant of a service account
 * (https://developers.google.com/identity/protocols/oauth2/service-account#httprest, RFC 7523).
 * A JWT `{iss: client_email, scope: cloud-platform, aud: token_uri, iat, exp: iat + 3600}` is
 * signed RS256 with the key file's private key (node:crypto) and posted form-encoded to the key
 * file's `token_uri`, which answers `{access_token, expires_in, token_type: "Bearer"}`.
 *
 * One token per channel is cached until shortly before it expires; concurrent callers share one
 * refresh (a single pending promise), so a burst of submissions costs one grant. Failures are
 * values: `not_sent` when the grant never reached the token endpoint, `refused` for any answer
 * that is not a token (bad key, revoked account, 5xx), `lost` when the answer did not come.
 * Neither the private key nor a token ever appears in a reason.
 */
import { createSign } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { explainFailure, readCapped, send } from '../outbound/client.js';
import { createTrustedDispatcher } from '../outbound/connection.js';
import type { ServiceAccountKey } from './google-config.js';

/** The scope every Vertex AI call needs (https://cloud.google.com/vertex-ai/docs/authentication). */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google's assertions may live at most one hour. */
const ASSERTION_TTL_S = 3600;
/** A cached token is renewed this long before it expires, so no call carries one that dies in flight. */
export const TOKEN_RENEW_BEFORE_MS = 5 * 60_000;

export type TokenOutcome =
  { readonly ok: true; readonly token: string } | { readonly ok: false; readonly kind: 'not_sent' | 'refused' | 'lost'; readonly reason: string };

export interface GoogleTokenSource {
  token(): Promise<TokenOutcome>;
  close(): Promise<void>;
}

const b64url = (data: Buffer | string): string => Buffer.from(data).toString('base64url');

/** The signed assertion (exported for the fake's tests of the claim set). */
export function signAssertion(key: ServiceAccountKey, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  const header = { alg: 'RS256', typ: 'JWT', ...(key.privateKeyId === '' ? {} : { kid: key.privateKeyId }) };
  const claims = { iss: key.clientEmail, scope: CLOUD_PLATFORM_SCOPE, aud: key.tokenUri, iat, exp: iat + ASSERTION_TTL_S };
  const unsigned = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const signature = createSign('RSA-SHA256').update(unsigned).sign(key.privateKey);
  return `${unsigned}.${b64url(signature)}`;
}

export function createGoogleTokenSource(
  key: ServiceAccountKey,
  options: { now?: () => number; dispatcher?: Dispatcher; timeoutMs?: number } = {},
): GoogleTokenSource {
  const now = options.now ?? Date.now;
  const origin = new URL(key.tokenUri).origin;
  const dispatcher = options.dispatcher ?? createTrustedDispatcher({ keepAliveTimeoutMs: 10_000 });
  const timeoutMs = options.timeoutMs ?? 30_000;
  let cached: { token: string; renewAt: number } | undefined;
  let pending: Promise<TokenOutcome> | undefined;

  async function grant(): Promise<TokenOutcome> {
    let assertion: string;
    try {
      assertion = signAssertion(key, now());
    } catch {
      return { ok: false, kind: 'not_sent', reason: 'the service-account private key cannot sign' };
    }
    const body = new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion }).toString();
    let sent = false;
    try {
      const response = await send(key.tokenUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'user-agent': 'mediagate' },
        body,
        signal: AbortSignal.timeout(timeoutMs),
        timeoutMs,
        trusted: { origin, dispatcher },
      });
      sent = true;
      const raw = await readCapped(response.body, 64 * 1024);
      if (raw === undefined) return { ok: false, kind: 'lost', reason: 'token answer too large' };
      let json: Record<string, unknown> = {};
      try {
        const parsed: unknown = JSON.parse(raw.toString('utf8'));
        if (typeof parsed === 'object' && parsed !== null) json = parsed as Record<string, unknown>;
      } catch {
        // not JSON: handled below as a refusal
      }
      const token = json['access_token'];
      if (response.status !== 200 || typeof token !== 'string' || token === '') {
        // The endpoint's own error words (`invalid_grant`...) say why; never its body otherwise.
        const error = typeof json['error'] === 'string' ? `: ${json['error'].slice(0, 64)}` : '';
        return { ok: false, kind: 'refused', reason: `token endpoint answered HTTP ${response.status}${error}` };
      }
      const expiresIn = typeof json['expires_in'] === 'number' && json['expires_in'] > 0 ? json['expires_in'] : 3600;
      cached = { token, renewAt: now() + Math.max(0, expiresIn * 1000 - TOKEN_RENEW_BEFORE_MS) };
      return { ok: true, token };
    } catch (err) {
      const why = explainFailure(err);
      if (!sent && why.notSentCode !== undefined) return { ok: false, kind: 'not_sent', reason: `token endpoint: ${why.notSentCode}` };
      return { ok: false, kind: 'lost', reason: `token endpoint: ${why.code ?? 'no answer'}` };
    }
  }

  return {
    token() {
      if (cached !== undefined && now() < cached.renewAt) return Promise.resolve({ ok: true, token: cached.token });
      pending ??= grant().finally(() => {
        pending = undefined;
      });
      return pending;
    },
    async close() {
      if (options.dispatcher === undefined) await dispatcher.close();
    },
  };
}

import { createHmac, randomBytes } from 'node:crypto';

/*
 * Standard Webhooks signing (decisions 8.5), with node:crypto: the scheme is one HMAC, and the
 * reference package would add a dependency for these few lines. The SDK's verifier
 * (client/webhook-signature.ts) is checked against this signer by test/webhooks-delivery.test.ts.
 */

/** `whsec_` and the base64 of 32 random bytes: the HMAC key, shown to the client once. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed by the secret's base64 part. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

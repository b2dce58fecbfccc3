import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Output URLs carry `exp` (Unix seconds) and `sig` = HMAC-SHA256(secret, key + "\n" + exp),
 * so they need no API key, cannot be guessed or altered, and stop working at `exp`.
 */
export class UrlSigner {
  constructor(private readonly secret: Buffer) {}

  sign(key: string, exp: number): string {
    return createHmac('sha256', this.secret).update(`${key}\n${exp}`).digest('base64url');
  }

  verify(key: string, exp: string, sig: string, nowS: number): boolean {
    if (!/^\d{1,12}$/.test(exp) || Number(exp) < nowS) return false;
    const expected = Buffer.from(this.sign(key, Number(exp)));
    const given = Buffer.from(sig);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

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
    return this.check(key, exp, sig, nowS) === 'valid';
  }

  /**
   * `expired` only for a URL we signed (the signature holds): a forged or altered one is
   * `invalid` whatever its `exp`, so the answer tells nothing about URLs one did not get.
   */
  check(key: string, exp: string, sig: string, nowS: number): 'valid' | 'expired' | 'invalid' {
    if (!/^\d{1,12}$/.test(exp)) return 'invalid';
    const expected = Buffer.from(this.sign(key, Number(exp)));
    const given = Buffer.from(sig);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return Number(exp) < nowS ? 'expired' : 'valid';
  }
}

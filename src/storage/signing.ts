import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Loop } from '../loop.js';
import type { MetaStore } from '../store/store.js';

/** The signing secrets a process holds: new URLs use `current`; `previous` verifies until `untilMs`. */
export interface SigningSecrets {
  readonly current: string;
  readonly previous?: { readonly secret: string; readonly untilMs: number } | undefined;
}

/**
 * Output URLs carry `exp` (Unix seconds) and `sig` = HMAC-SHA256(secret, key + "\n" + exp),
 * so they need no API key, cannot be guessed or altered, and stop working at `exp`.
 *
 * The secrets can be replaced while the process runs (`mediagate secrets rotate`, picked up by
 * `startSigningRefresh`): a URL signed with the previous secret verifies until its grace ends,
 * then is `invalid` as a forged one is.
 */
export class UrlSigner {
  private current: Buffer;
  private previous: { readonly secret: Buffer; readonly untilMs: number } | undefined;
  private rotations = 0;

  constructor(secrets: SigningSecrets) {
    this.current = Buffer.from(secrets.current);
    this.use(secrets);
  }

  /** Takes the secrets a refresh read; no I/O, so the files route never waits on the store. */
  use(secrets: SigningSecrets): void {
    const current = Buffer.from(secrets.current);
    if (!current.equals(this.current)) this.rotations += 1;
    this.current = current;
    this.previous = secrets.previous && { secret: Buffer.from(secrets.previous.secret), untilMs: secrets.previous.untilMs };
  }

  /** Changes when the current secret does: whoever remembers signed URLs drops them then. */
  get generation(): number {
    return this.rotations;
  }

  sign(key: string, exp: number): string {
    return hmac(this.current, key, exp);
  }

  verify(key: string, exp: string, sig: string, nowS: number): boolean {
    return this.check(key, exp, sig, nowS) === 'valid';
  }

  /**
   * `expired` only for a URL we signed (the signature holds): a forged or altered one is
   * `invalid` whatever its `exp`, so the answer tells nothing about URLs one did not get.
   */
  check(key: string, exp: string, sig: string, nowS: number): 'valid' | 'expired' | 'invalid' {
    // Only the canonical spelling we sign (`String(exp)`): `0123` would name the same number,
    // so one signature would open many URLs.
    if (!/^(?:0|[1-9]\d{0,11})$/.test(exp)) return 'invalid';
    const given = Buffer.from(sig);
    const previous = this.previous && nowS * 1000 < this.previous.untilMs ? this.previous.secret : undefined;
    const signed = [this.current, ...(previous ? [previous] : [])].some((secret) => {
      const expected = Buffer.from(hmac(secret, key, Number(exp)));
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
    if (!signed) return 'invalid';
    return Number(exp) < nowS ? 'expired' : 'valid';
  }
}

function hmac(secret: Buffer, key: string, exp: number): string {
  return createHmac('sha256', secret).update(`${key}\n${exp}`).digest('base64url');
}

/** Where the secrets live: the store's meta table, of which signing reads and writes these. */
export type SigningMeta = Pick<MetaStore, 'listMeta' | 'initMeta' | 'swapMeta'>;

/** The key the secret has had since the first release (kept: existing deployments hold it there). */
export const SECRET_KEY = 'url_signing_secret';
const CREATED_KEY = 'url_signing_secret_created_at';
/** `{"secret": ..., "untilMs": ...}`: one row, so a refresh never sees a secret without its end. */
const PREVIOUS_KEY = 'url_signing_secret_previous';

export interface SigningState extends SigningSecrets {
  /** When the current secret was made; undefined for one made before rotation existed. */
  readonly createdAtMs: number | undefined;
}

export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The secrets as stored now, the current one created at first start if there is none. */
export async function loadSigningState(meta: SigningMeta, nowMs = Date.now()): Promise<SigningState> {
  let state = await readSigningState(meta);
  if (state) return state;
  const made = newSecret();
  const stored = await meta.initMeta(SECRET_KEY, made);
  if (stored === made) await meta.initMeta(CREATED_KEY, String(nowMs));
  state = await readSigningState(meta);
  if (!state) throw new Error(`meta ${SECRET_KEY} vanished after insert`);
  return state;
}

/** The stored secrets, or undefined before the first start made one. */
export async function readSigningState(meta: SigningMeta): Promise<SigningState | undefined> {
  // `_` is a LIKE wildcard: the pattern may match more keys; only the exact ones are read.
  const rows = new Map((await meta.listMeta(`${SECRET_KEY}%`)).map((row) => [row.key, row.value]));
  const current = rows.get(SECRET_KEY);
  if (current === undefined) return undefined;
  const created = Number(rows.get(CREATED_KEY));
  return { current, previous: parsePrevious(rows.get(PREVIOUS_KEY)), createdAtMs: Number.isFinite(created) && created > 0 ? created : undefined };
}

function parsePrevious(raw: string | undefined): SigningSecrets['previous'] {
  if (raw === undefined) return undefined;
  try {
    const parsed = JSON.parse(raw) as { secret?: unknown; untilMs?: unknown };
    return typeof parsed.secret === 'string' && typeof parsed.untilMs === 'number' ? { secret: parsed.secret, untilMs: parsed.untilMs } : undefined;
  } catch {
    return undefined;
  }
}

export interface Rotation {
  readonly rotatedAtMs: number;
  /** When the replaced secret stops verifying (= rotatedAtMs with no grace). */
  readonly previousUntilMs: number;
}

/**
 * Makes a new current secret and keeps the replaced one verifying for `graceMs`. A
 * compare-and-set on the current secret, with the previous one written in its transaction:
 * of two concurrent rotations one wins, the other retries on top of it, so the secret that was
 * current (and may have signed URLs meanwhile) always becomes the previous one.
 */
export async function rotateSigningSecret(meta: SigningMeta, graceMs: number, now: () => number = Date.now): Promise<Rotation> {
  for (let attempt = 0; attempt < 10; attempt += 1) {
    const state = await loadSigningState(meta, now());
    const rotatedAtMs = now();
    const previousUntilMs = rotatedAtMs + graceMs;
    const swapped = await meta.swapMeta(SECRET_KEY, state.current, newSecret(), [
      { key: CREATED_KEY, value: String(rotatedAtMs) },
      { key: PREVIOUS_KEY, value: JSON.stringify({ secret: state.current, untilMs: previousUntilMs }) },
    ]);
    if (swapped) return { rotatedAtMs, previousUntilMs };
  }
  throw new Error('the signing secret kept changing under this rotation (10 attempts): try again');
}

/**
 * The loop (not started) that keeps `signer` on the stored secrets: reads them every
 * `intervalMs` in the background (one statement; never on a request). A failed read keeps the
 * secrets it has and is reported to `onError`. Its stop awaits a read in flight, so that the
 * store can be closed after it.
 */
export function signingRefreshLoop(signer: UrlSigner, meta: SigningMeta, intervalMs: number, onError: (error: unknown) => void): Loop {
  return new Loop({
    name: 'signing-refresh',
    immediate: false,
    intervalMs,
    onError,
    turn: async () => {
      const state = await readSigningState(meta);
      if (state) signer.use(state);
    },
  });
}

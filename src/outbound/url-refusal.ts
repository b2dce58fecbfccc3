import { lookup as dnsLookup } from 'node:dns/promises';
import { createAddressPolicy, isAddressLiteral, type FetchAllowList } from './address-policy.js';
import { assertFetchableUrl, FetchError } from './client.js';

export type Resolve = (host: string) => Promise<readonly { address: string }[]>;

/** The resolver's codes for a name that has no address (or none it could get). */
// Not EAI_AGAIN: a resolver that failed for the moment is a network failure, tried again as such.
const UNRESOLVED = new Set(['ENOTFOUND', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENODATA']);

/** Whether an error (or one of its causes) says a host name could not be resolved. */
export function isUnresolved(error: unknown): boolean {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth += 1) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && UNRESOLVED.has(code)) return true;
  }
  return false;
}

/**
 * The one refusal of a host the service will not reach, whatever the reason: a name that does
 * not resolve and a name that resolves to a private address get the same words (and reason),
 * so a client cannot tell which internal names exist. The reason is kept in the cause, for logs.
 */
export function notPublic(host: string, cause: unknown): FetchError {
  return new FetchError('refused', `${host} is not a public address; only public addresses are fetched`, { cause });
}

const resolveAll: Resolve = (host) => dnsLookup(host, { all: true });

/**
 * Checks an https input URL that is not fetched here (an engine that does not read it, an
 * upstream that fetches it itself) against the same address policy a fetch goes through
 * (client.ts, connection.ts): the URL rules, the allow-list, then every address the host resolves to.
 * Resolves when allowed; throws FetchError (`bad_url`, `refused`) otherwise.
 */
export async function assertPublicUrl(raw: string, allow: FetchAllowList = {}, resolve: Resolve = resolveAll): Promise<void> {
  const url = assertFetchableUrl(raw);
  const policy = createAddressPolicy(allow);
  const host = url.hostname;
  if (policy.hostAllowed(host)) return;
  // The same words as a refused fetch (media/fetcher.ts): the range a name resolved into is
  // for our logs (the cause), never for the client, who must not learn how we see internal names.
  const refused = (range: string) => notPublic(host, new Error(`address range: ${range}`));
  if (isAddressLiteral(host)) {
    const why = policy.refusal(host);
    if (why !== undefined) throw refused(why);
    return;
  }
  let addresses: readonly { address: string }[];
  try {
    addresses = await resolve(host);
  } catch (cause) {
    // Not "could not be resolved": that answer, beside "not a public address" for the names
    // that do resolve inward, would tell a client which internal names exist.
    throw notPublic(host, cause);
  }
  // As the guarded lookup of a fetch decides: refused when no address it resolves to is allowed.
  let why = 'no address';
  for (const { address } of addresses) {
    const refusal = policy.refusal(address);
    if (refusal === undefined) return;
    why = refusal;
  }
  throw refused(why);
}

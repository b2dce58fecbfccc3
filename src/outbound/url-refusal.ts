import { lookup as dnsLookup } from 'node:dns/promises';
import { createAddressPolicy, isAddressLiteral, type FetchAllowList } from './address-policy.js';
import { assertFetchableUrl, FetchError } from './client.js';

export type Resolve = (host: string) => Promise<readonly { address: string }[]>;

const resolveAll: Resolve = (host) => dnsLookup(host, { all: true });

/**
 * Checks an https input URL that is not fetched here (an engine that does not read it, an
 * upstream that fetches it itself) against the same address policy a fetch goes through
 * (client.ts, connection.ts): the URL rules, the allow-list, then every address the host resolves to.
 * Resolves when allowed; throws FetchError (`bad_url`, `refused`, `network`) otherwise.
 */
export async function assertPublicUrl(raw: string, allow: FetchAllowList = {}, resolve: Resolve = resolveAll): Promise<void> {
  const url = assertFetchableUrl(raw);
  const policy = createAddressPolicy(allow);
  const host = url.hostname;
  if (policy.hostAllowed(host)) return;
  // The same words as a refused fetch (media/fetcher.ts): the range a name resolved into is
  // for our logs (the cause), never for the client, who must not learn how we see internal names.
  const refused = (range: string) =>
    new FetchError('refused', `${host} is not a public address; only public addresses are fetched`, { cause: new Error(`address range: ${range}`) });
  if (isAddressLiteral(host)) {
    const why = policy.refusal(host);
    if (why !== undefined) throw refused(why);
    return;
  }
  let addresses: readonly { address: string }[];
  try {
    addresses = await resolve(host);
  } catch (cause) {
    throw new FetchError('network', `${host} could not be resolved`, { cause });
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

/**
 * Which network addresses a media fetch may connect to. The default answer is "public unicast
 * only": every loopback, private, link-local, CGNAT, multicast, reserved, unspecified or
 * documentation address is refused, for IPv4 and IPv6, including IPv6 forms that embed an IPv4
 * address (IPv4-mapped, IPv4-translated, NAT64) and IPv4 written in decimal, octal or hex.
 * Cloud metadata endpoints (169.254.169.254, fd00:ec2::254, 100.100.100.200) fall in these
 * ranges. An operator may allow named hosts, or private ranges, for development.
 *
 * Guarded by test/fetch-policy.test.ts.
 */
import ipaddr from 'ipaddr.js';

/** What an operator allowed beyond public addresses. Empty (nothing extra) by default. */
export interface FetchAllowList {
  /**
   * Host names (or IP literals) fetched whatever they resolve to, compared case-insensitively
   * with the URL's host. MEDIAGATE_FETCH_ALLOW_HOSTS.
   */
  readonly hosts?: readonly string[];
  /**
   * Non-public addresses that may be connected to: `true` for every address, or CIDR ranges
   * (`10.0.0.0/8`, `fd00::/8`). MEDIAGATE_FETCH_ALLOW_PRIVATE. Default: none.
   */
  readonly private?: boolean | readonly string[];
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Why an address is not public: the ipaddr.js range name ('loopback', 'private', ...). */
export type AddressVerdict = { readonly public: true } | { readonly public: false; readonly range: string };

/** Parses any spelling ipaddr.js knows (dotted, decimal, octal, hex IPv4; IPv6 with or without brackets). */
export function parseAddress(text: string): Address | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  // A zone index (`fe80::1%eth0`) names an interface: always link-local, never public.
  const unzoned = bare.split('%')[0] ?? bare;
  try {
    return ipaddr.parse(unzoned);
  } catch {
    return undefined;
  }
}

/** True when `text` is an IP address literal in any spelling (and so is not looked up). */
export function isAddressLiteral(text: string): boolean {
  return parseAddress(text) !== undefined;
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

function classifyV4(address: ipaddr.IPv4): AddressVerdict {
  const range = address.range();
  return range === 'unicast' ? { public: true } : { public: false, range };
}

/** Public means globally routable unicast; every special-purpose range is refused. */
export function classifyAddress(address: Address): AddressVerdict {
  if (address instanceof ipaddr.IPv4) return classifyV4(address);
  const v6 = address;
  // ::ffff:a.b.c.d and 64:ff9b::a.b.c.d reach an IPv4 address: judge that address.
  if (v6.isIPv4MappedAddress()) {
    const inner = classifyV4(v6.toIPv4Address());
    return inner.public ? inner : { public: false, range: `ipv4Mapped ${inner.range}` };
  }
  if (v6.match(NAT64_WELL_KNOWN)) {
    const parts = v6.toByteArray().slice(12);
    const inner = classifyV4(new ipaddr.IPv4(parts));
    return inner.public ? inner : { public: false, range: `nat64 ${inner.range}` };
  }
  const range = v6.range();
  // 'unicast' is ipaddr's fallback for anything unlisted; only 2000::/3 is global unicast.
  if (range !== 'unicast' || !v6.match(GLOBAL_UNICAST_V6)) return { public: false, range: range === 'unicast' ? 'reserved' : range };
  return { public: true };
}

export interface AddressPolicy {
  /** True when the host name is on the allow-list: it is fetched whatever it resolves to. */
  hostAllowed(host: string): boolean;
  /** Why connecting to `address` is refused, or undefined when it is allowed. */
  refusal(address: string): string | undefined;
}

function normaliseHost(host: string): string {
  const lower = host.trim().toLowerCase().replace(/\.$/, '');
  return lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
}

/** Builds the policy once; `refusal` is called for every address a fetch could connect to. */
export function createAddressPolicy(allow: FetchAllowList = {}): AddressPolicy {
  const hosts = new Set((allow.hosts ?? []).map(normaliseHost));
  // An allowed IP literal also matches its other spellings (`::1` and `0:0::1`).
  for (const host of [...hosts]) {
    const parsed = parseAddress(host);
    if (parsed) hosts.add(parsed.toString());
  }
  const allowAll = allow.private === true;
  const ranges = typeof allow.private === 'object' ? allow.private.map((cidr) => ipaddr.parseCIDR(cidr)) : [];
  return {
    hostAllowed(host) {
      if (hosts.size === 0) return false;
      const normal = normaliseHost(host);
      if (hosts.has(normal)) return true;
      const parsed = parseAddress(normal);
      return parsed !== undefined && hosts.has(parsed.toString());
    },
    refusal(text) {
      const address = parseAddress(text);
      if (!address) return 'not an IP address';
      const verdict = classifyAddress(address);
      if (verdict.public || allowAll) return undefined;
      for (const [base, bits] of ranges) {
        // Compare like with like; an IPv4-mapped address also matches IPv4 ranges.
        const candidate = base instanceof ipaddr.IPv4 && address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() ? address.toIPv4Address() : address;
        if (candidate.kind() === base.kind() && candidate.match(base, bits)) return undefined;
      }
      return verdict.range;
    },
  };
}

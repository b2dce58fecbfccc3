/**
 * The connection pools every outbound request goes through, and the one place for connection
 * policy:
 * - `createFetchDispatcher`: for URLs a user gave us (media inputs, webhook endpoints, output
 *   hops off a channel's origin). Every connection, redirects included, is checked against the
 *   address policy (`address-policy.ts`): a `lookup` that resolves and drops refused addresses,
 *   a check of IP-literal hosts, and a check of the connected socket's address.
 * - `createTrustedDispatcher`: for an origin the operator configured (a channel's base_url),
 *   connected to whatever it resolves to.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { createAddressPolicy, isAddressLiteral, type AddressPolicy, type FetchAllowList } from './address-policy.js';

export interface FetchDispatcherOptions {
  /**
   * DNS resolution used for every connection (default `dns.lookup`; tests pass a stub). Its
   * answers are filtered by the address policy before any connection is made.
   */
  readonly lookup?: LookupFunction;
  /** Hosts and non-public ranges an operator allowed (development only). Default: none. */
  readonly allow?: FetchAllowList;
  /** Extra TLS options (e.g. `ca` in tests). */
  readonly tls?: ConnectionOptions;
  /** Connect timeout in ms. Default 10000. */
  readonly connectTimeoutMs?: number;
}

/**
 * Thrown inside the connection path when the policy refuses an address. It carries no address
 * in its message: a client must not learn how our resolver sees internal names.
 */
export class AddressRefusedError extends Error {
  override readonly name = 'AddressRefusedError';
  readonly code = 'EMEDIAGATE_ADDRESS_REFUSED';
  constructor(
    readonly host: string,
    /** The range name ('loopback', 'private', ...), for logs. */
    readonly range: string,
  ) {
    super(`${host} is not a public address`);
  }
}

type LookupCallback = Parameters<LookupFunction>[2];

/**
 * Wraps a resolver so it only ever answers allowed addresses: the address a socket connects to
 * is the one this function returned, so there is no window between check and connect (DNS
 * rebinding cannot slip a private address in after the check).
 */
function guardedLookup(inner: LookupFunction, policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback: LookupCallback) => {
    inner(hostname, { ...options, all: true }, (error, answer, family) => {
      if (error) {
        callback(error, '', undefined);
        return;
      }
      const addresses: LookupAddress[] = typeof answer === 'string' ? [{ address: answer, family: family ?? (answer.includes(':') ? 6 : 4) }] : answer;
      if (policy.hostAllowed(hostname)) {
        callback(null, options.all ? addresses : (addresses[0]?.address ?? ''), addresses[0]?.family);
        return;
      }
      const allowed: LookupAddress[] = [];
      let refusal = 'no address';
      for (const entry of addresses) {
        const why = policy.refusal(entry.address);
        if (why === undefined) allowed.push(entry);
        else refusal = why;
      }
      const first = allowed[0];
      if (!first) {
        callback(new AddressRefusedError(hostname, refusal), '', undefined);
        return;
      }
      if (options.all) callback(null, allowed);
      else callback(null, first.address, first.family);
    });
  };
}

/**
 * Builds a pool whose every connection obeys the address policy:
 * - a host on the allow-list is connected to whatever it resolves to;
 * - an IP-literal host (any spelling) is checked before connecting;
 * - a name is resolved through `guardedLookup`, which drops refused addresses;
 * - the connected socket's remote address is checked again before a byte of HTTP is sent.
 */
export function createFetchDispatcher(options: FetchDispatcherOptions = {}): Dispatcher {
  const policy = createAddressPolicy(options.allow);
  const base = buildConnector({
    ...options.tls,
    lookup: guardedLookup(options.lookup ?? dnsLookup, policy),
    timeout: options.connectTimeoutMs ?? 10_000,
  });
  const connect: buildConnector.connector = (target, callback) => {
    const host = target.hostname;
    const allowedHost = policy.hostAllowed(host);
    if (!allowedHost && isAddressLiteral(host)) {
      const why = policy.refusal(host);
      if (why !== undefined) {
        callback(new AddressRefusedError(host, why), null);
        return;
      }
    }
    base(target, (...result) => {
      const [error, socket] = result;
      if (error !== null) {
        callback(error, null);
        return;
      }
      const why = allowedHost ? undefined : policy.refusal(socket.remoteAddress ?? '');
      if (why !== undefined) {
        socket.destroy();
        callback(new AddressRefusedError(host, why), null);
        return;
      }
      callback(null, socket);
    });
  };
  return new Agent({
    connect,
    // A media fetch or a webhook POST is one request; keeping idle sockets around only holds resources.
    keepAliveTimeout: 1_000,
  });
}

export interface TrustedDispatcherOptions {
  /** Connect timeout in ms. Default 10000. */
  readonly connectTimeoutMs?: number;
  /** How long an idle connection is kept for the next request, in ms. */
  readonly keepAliveTimeoutMs: number;
}

/**
 * A pool for an operator-configured origin (a channel's API): no address policy, since the
 * operator may well run the upstream on a private network. Only requests that `send` (client.ts)
 * routes to that origin use it.
 */
export function createTrustedDispatcher(options: TrustedDispatcherOptions): Dispatcher {
  return new Agent({ connect: { timeout: options.connectTimeoutMs ?? 10_000 }, keepAliveTimeout: options.keepAliveTimeoutMs });
}

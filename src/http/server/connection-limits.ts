import type { Server } from 'node:http';

/**
 * Bounds on what one connection may hold: a client that trickles headers or a declared body
 * is cut at its timeout (also after we answered, e.g. a 401 before the body arrived), and a
 * flood of idle sockets stops at the cap. Node enforces both timeouts by a periodic check.
 */
export interface ConnectionLimits {
  /** MEDIAGATE_HEADERS_TIMEOUT_S: the whole header block must arrive within this. */
  readonly headersTimeoutMs: number;
  /** MEDIAGATE_REQUEST_TIMEOUT_S: the whole request, body included, must arrive within this. */
  readonly requestTimeoutMs: number;
  /** MEDIAGATE_MAX_CONNECTIONS: open connections at most; more are refused at accept. */
  readonly maxConnections: number;
  /** MEDIAGATE_MAX_HEADER_BYTES: largest header block; larger ones get 431. */
  readonly maxHeaderBytes: number;
}

/** How often Node looks for connections past a timeout: a fraction of the shortest one. */
export function checkIntervalMs(limits: ConnectionLimits): number {
  return Math.max(100, Math.min(1000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)));
}

export function applyConnectionLimits(server: Server, limits: ConnectionLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.maxConnections = limits.maxConnections;
}

import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Dispatcher } from 'undici';
import { createFetchDispatcher } from '../../src/outbound/connection.js';

const TLS_DIR = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));
export const TEST_CA = readFileSync(`${TLS_DIR}cert.pem`);
const TEST_KEY = readFileSync(`${TLS_DIR}key.pem`);

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface TestHttpsServer {
  /** `https://127.0.0.1:<port>` */
  readonly origin: string;
  /** A dispatcher that trusts the fixture certificate (and nothing is disabled). */
  readonly dispatcher: Dispatcher;
  close(): Promise<void>;
}

/**
 * A local HTTPS server with the self-signed fixture certificate. Routes are matched on the
 * path only; unknown paths answer 404.
 */
export async function startHttpsServer(routes: Readonly<Record<string, Handler>>): Promise<TestHttpsServer> {
  const server: Server = createServer({ cert: TEST_CA, key: TEST_KEY }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    const handler = routes[path];
    if (handler) handler(req, res);
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // The server is on loopback, which the fetch policy refuses by default: allow it by name.
  const dispatcher = createFetchDispatcher({ tls: { ca: TEST_CA }, allow: { hosts: ['127.0.0.1'] } });
  return {
    origin: `https://127.0.0.1:${port}`,
    dispatcher,
    async close() {
      await dispatcher.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

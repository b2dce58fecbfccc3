import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a dependency (PostgreSQL, an S3 gateway) that a spec can cut and
 * restore, to play an outage without touching the shared service behind it. Cut: every open
 * connection is destroyed (a reset, as a crashed server's) and new ones are refused (accepted,
 * then destroyed at once, as a refusal would look to a client that connected already); restore:
 * new connections go through again.
 */
export interface TcpProxy {
  /** `host:port` of the proxy. */
  readonly host: string;
  readonly port: number;
  /** Connections made through the proxy so far (an outage shows in it as refusals). */
  readonly stats: { connections: number; refused: number };
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const stats = { connections: 0, refused: 0 };
  let down = false;
  const server: Server = createServer((client) => {
    if (down) {
      stats.refused += 1;
      client.destroy();
      return;
    }
    stats.connections += 1;
    const upstream = connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const cutAll = (): void => {
    for (const socket of open) socket.resetAndDestroy();
    open.clear();
  };
  return {
    host: '127.0.0.1',
    port,
    stats,
    cut() {
      down = true;
      cutAll();
    },
    restore() {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        cutAll();
        server.close(() => resolve());
      }),
  };
}

/** `url` with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const parsed = new URL(url);
  parsed.hostname = proxy.host;
  parsed.port = String(proxy.port);
  return parsed.toString();
}

import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a dependency (PostgreSQL, an S3 gateway) that a spec can cut and
 * restore, to play an outage without touching the shared service behind it. Cut: every open
 * connection is reset (as a crashed server's) and the port stops listening, so new
 * connections are refused (ECONNREFUSED, as a stopped server's); restore: it listens on the
 * same port again and connections go through.
 */
export interface TcpProxy {
  /** `host:port` of the proxy. */
  readonly host: string;
  readonly port: number;
  /** Connections made through the proxy so far. */
  readonly stats: { connections: number };
  cut(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const stats = { connections: 0 };
  let down = false;
  const server: Server = createServer((client) => {
    // Accepted just as the cut began.
    if (down) {
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
      server.close();
      cutAll();
    },
    async restore() {
      if (!down) return;
      down = false;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        down = true;
        cutAll();
        if (server.listening) server.close(() => resolve());
        else resolve();
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

import { createServer } from 'node:net';

/**
 * Whether `host:port` can be bound now. Checked before anything is created (a first API key
 * above all), so a taken port costs nothing but one line. Port 0 is always free.
 */
export async function portProblem(host: string, port: number): Promise<string | undefined> {
  if (port === 0) return undefined;
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(describeListenError(error, host, port)));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/** One line for an error of listen(); undefined when it is not one we can say plainly. */
export function describeListenError(error: NodeJS.ErrnoException, host: string, port: number): string | undefined {
  if (error.code === 'EADDRINUSE') return `port ${port} on ${host} is already in use (EADDRINUSE): stop what listens there, or set PORT to another port`;
  if (error.code === 'EACCES') return `no permission to listen on ${host}:${port} (EACCES): use a port above 1023, or set PORT`;
  if (error.code === 'EADDRNOTAVAIL') return `${host} is not an address of this machine (EADDRNOTAVAIL): check HOST`;
  return undefined;
}

/**
 * Slow and oversized requests, seen from a raw socket: a trickled header block or declared
 * body is cut at its timeout (also after the 401 it already got), an oversized header block
 * gets 431, and connections past the cap are refused. Request ids reveal nothing of traffic.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { startServer, type TestServer } from './helpers/server.js';

interface Raw {
  readonly socket: Socket;
  /** Everything received so far. */
  text(): string;
  readonly closed: Promise<number>;
}

/** This process's API server itself, not a proxy in front of it (split topology). */
function direct(server: TestServer): string {
  const address = server.app.http.server.address();
  return typeof address === 'object' && address !== null ? `http://127.0.0.1:${address.port}` : server.url;
}

/** Opens a socket; `closed` resolves with the ms from open to close. */
async function open(url: string): Promise<Raw> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const started = Date.now();
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - started)));
  return { socket, text: () => received, closed };
}

/** Writes one byte every `everyMs` until the socket closes. */
function trickle(raw: Raw, byte: string, everyMs: number): void {
  const timer = setInterval(() => {
    if (raw.socket.destroyed || !raw.socket.writable) clearInterval(timer);
    else raw.socket.write(byte);
  }, everyMs);
  void raw.closed.then(() => clearInterval(timer));
}

describe('connection limits', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({
      MEDIAGATE_HEADERS_TIMEOUT_S: '1',
      MEDIAGATE_REQUEST_TIMEOUT_S: '2',
      MEDIAGATE_MAX_HEADER_BYTES: '4096',
      MEDIAGATE_MAX_CONNECTIONS: '20',
    });
  });
  afterAll(async () => server.close());

  it('closes a connection trickling a declared body at the request timeout, even after its 401', async () => {
    const raw = await open(direct(server));
    raw.socket.write('POST /v1/video/generations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{');
    trickle(raw, ' ', 100);
    await eventually(() => Promise.resolve(raw.text().startsWith('HTTP/1.1 401')), { deadline: 5000, interval: 20, what: 'the 401' });
    const ms = await Promise.race([raw.closed, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 10_000))]);
    raw.socket.destroy();
    expect(ms, 'the connection was still open after 10 s').toBeGreaterThan(0);
    expect(ms).toBeGreaterThanOrEqual(1500);
    expect(ms).toBeLessThan(6000);
  });

  it('answers 408 and closes a connection trickling its headers, at the header timeout', async () => {
    const raw = await open(direct(server));
    raw.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    trickle(raw, 'a', 100);
    const ms = await Promise.race([raw.closed, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 10_000))]);
    raw.socket.destroy();
    expect(ms, 'the connection was still open after 10 s').toBeGreaterThan(0);
    expect(ms).toBeLessThan(5000);
    expect(raw.text()).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(raw.text().split('\r\n\r\n')[1] ?? '')).toMatchObject({ error: { code: 'request_timeout' } });
  });

  it('answers 431 headers_too_large to an oversized header block', async () => {
    const raw = await open(direct(server));
    raw.socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(8192)}\r\n\r\n`);
    await raw.closed;
    expect(raw.text()).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(raw.text().split('\r\n\r\n')[1] ?? '')).toMatchObject({ error: { code: 'headers_too_large', param: '' } });
    // A header block under the cap is served.
    const ok = await fetch(`${direct(server)}/healthz`, { headers: { 'x-big': 'a'.repeat(2048) } });
    expect(ok.status).toBe(200);
  });

  it('gives request ids that are random, not a counter', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i += 1) ids.push((await fetch(`${direct(server)}/healthz`)).headers.get('x-request-id') ?? '');
    expect(new Set(ids).size).toBe(20);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{16}$/);
    // No shared prefix beyond chance: a counter behind a per-process prefix shares most of it.
    const common = (a: string, b: string) => [...a].findIndex((c, i) => c !== b[i]);
    const shared = ids.slice(1).map((id, i) => common(id, ids[i] ?? ''));
    expect(Math.max(...shared)).toBeLessThan(6);
  });
});

describe('connection cap', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_MAX_CONNECTIONS: '3' });
  });
  afterAll(async () => server.close());

  it('refuses connections past MEDIAGATE_MAX_CONNECTIONS and accepts again once one closes', async () => {
    const held = await Promise.all([open(direct(server)), open(direct(server)), open(direct(server))]);
    // Each held connection is established on the server's side before the next one is tried.
    for (const raw of held) raw.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await eventually(() => Promise.resolve(held.every((raw) => raw.text().includes('"ok"'))), {
      deadline: 5000,
      interval: 20,
      what: 'held connections served',
    });
    const extra = await open(direct(server));
    const ms = await Promise.race([extra.closed, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 5000))]);
    expect(ms, 'the connection past the cap stayed open').toBeGreaterThanOrEqual(0);
    expect(extra.text()).toBe('');
    for (const raw of held) raw.socket.destroy();
    await Promise.all(held.map((raw) => raw.closed));
    await eventually(
      async () =>
        (await fetch(`${direct(server)}/healthz`).then(
          (res) => res.status,
          () => 0,
        )) === 200,
      {
        deadline: 5000,
        interval: 50,
        what: 'a new connection served',
      },
    );
  });
});

import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchHttps, loadMediaInput, type FetchOptions } from '../src/media/fetcher.js';
import { FetchError } from '../src/outbound/client.js';
import { startHttpsServer, type TestHttpsServer } from './helpers/https-server.js';

const PAYLOAD = Buffer.from('just some bytes');

/** Resolves with the outcome of `promise` as a FetchError, failing the test on anything else. */
async function fetchError(promise: Promise<unknown>): Promise<FetchError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(FetchError);
  return error as FetchError;
}

let server: TestHttpsServer;
/** Settles when the server sees the client drop an endless response. */
let endlessClosed: Promise<number>;
let resolveEndless: (bytesSent: number) => void;
const hangingResponses: ServerResponse[] = [];

beforeAll(async () => {
  endlessClosed = new Promise((resolve) => {
    resolveEndless = resolve;
  });
  server = await startHttpsServer({
    '/ok': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/PNG; charset=binary' }).end(PAYLOAD);
    },
    '/endless': (_req, res) => {
      // No Content-Length: the client can only notice the size while streaming.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 1);
      let sent = 0;
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk)) sent += chunk.length;
      };
      res.on('drain', pump);
      res.on('close', () => resolveEndless(sent));
      pump();
    },
    '/declared-large': (_req, res) => {
      res.writeHead(200, { 'content-length': String(1024 * 1024) });
      res.write(Buffer.alloc(10));
      hangingResponses.push(res);
    },
    '/hang': (_req, res) => {
      hangingResponses.push(res);
    },
    '/r3': (_req, res) => res.writeHead(302, { location: '/r2' }).end(),
    '/r2': (_req, res) => res.writeHead(301, { location: '/r1' }).end(),
    '/r1': (_req, res) => res.writeHead(307, { location: '/ok' }).end(),
    '/to-http': (_req, res) => res.writeHead(302, { location: 'http://127.0.0.1:1/ok' }).end(),
    '/missing': (_req, res) => res.writeHead(404).end('no'),
    '/broken': (_req, res) => res.writeHead(503).end('down'),
  });
});

afterAll(async () => {
  for (const res of hangingResponses) res.destroy();
  await server.close();
});

function opts(extra: FetchOptions = {}): FetchOptions {
  return { dispatcher: server.dispatcher, ...extra };
}

describe('fetchHttps: success', () => {
  it('returns the bytes and the bare, lower-case content type', async () => {
    const got = await fetchHttps(`${server.origin}/ok`, opts());
    expect(got.bytes.equals(PAYLOAD)).toBe(true);
    expect(got.mime).toBe('image/png');
    expect(got.url).toBe(`${server.origin}/ok`);
  });
});

describe('fetchHttps: size cap', () => {
  it('cuts an endless body as soon as it passes maxBytes', async () => {
    const maxBytes = 256 * 1024;
    const error = await fetchError(fetchHttps(`${server.origin}/endless`, opts({ maxBytes })));
    expect(error.reason).toBe('too_large');
    // The server only stops when the client drops the connection.
    const sent = await endlessClosed;
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it('refuses a declared Content-Length over maxBytes without reading the body', async () => {
    const error = await fetchError(fetchHttps(`${server.origin}/declared-large`, opts({ maxBytes: 1000 })));
    expect(error.reason).toBe('too_large');
  });
});

describe('fetchHttps: deadline and abort', () => {
  it('times out on a server that never answers', async () => {
    const started = Date.now();
    const error = await fetchError(fetchHttps(`${server.origin}/hang`, opts({ timeoutMs: 300 })));
    expect(error.reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    const pending = fetchHttps(`${server.origin}/hang`, opts({ signal: controller.signal }));
    controller.abort(new Error('cancelled by test'));
    const error = await fetchError(pending);
    expect(error.reason).toBe('aborted');
  });
});

describe('fetchHttps: redirects', () => {
  it('follows up to maxRedirects', async () => {
    const got = await fetchHttps(`${server.origin}/r3`, opts({ maxRedirects: 3 }));
    expect(got.bytes.equals(PAYLOAD)).toBe(true);
    expect(got.url).toBe(`${server.origin}/ok`);
  });

  it('gives up past maxRedirects', async () => {
    const error = await fetchError(fetchHttps(`${server.origin}/r3`, opts({ maxRedirects: 2 })));
    expect(error.reason).toBe('too_many_redirects');
  });

  it('refuses a redirect to plain http', async () => {
    const error = await fetchError(fetchHttps(`${server.origin}/to-http`, opts()));
    expect(error.reason).toBe('bad_url');
  });
});

describe('fetchHttps: status and URL policy', () => {
  it.each([
    ['/missing', 404],
    ['/broken', 503],
  ])('%s -> http_status %i', async (path, status) => {
    const error = await fetchError(fetchHttps(`${server.origin}${path}`, opts()));
    expect(error.reason).toBe('http_status');
    expect(error.status).toBe(status);
  });

  it.each(['http://127.0.0.1/ok', 'ftp://example.com/x', 'https://user:pw@example.com/x', 'not a url'])('refuses %s before connecting', async (url) => {
    const error = await fetchError(fetchHttps(url, opts()));
    expect(error.reason).toBe('bad_url');
  });

  it('reports a connection failure as network', async () => {
    const error = await fetchError(fetchHttps('https://127.0.0.1:1/ok', opts()));
    expect(error.reason).toBe('network');
  });
});

describe('loadMediaInput', () => {
  it('decodes a data URL without the network', async () => {
    const got = await loadMediaInput(`data:image/png;base64,${PAYLOAD.toString('base64')}`);
    expect(got).toEqual({ bytes: PAYLOAD, mime: 'image/png' });
  });

  it('fetches an https URL', async () => {
    const got = await loadMediaInput(`${server.origin}/ok`, opts());
    expect(got.bytes.equals(PAYLOAD)).toBe(true);
  });

  it('refuses a data URL over maxBytes', async () => {
    const error = await fetchError(loadMediaInput(`data:image/png;base64,${PAYLOAD.toString('base64')}`, { maxBytes: 4 }));
    expect(error.reason).toBe('too_large');
  });

  it.each(['data:image/png;base64,!!!', 'data:image/png,plain', 'http://example.com/a.png', ''])('refuses %j', async (value) => {
    const error = await fetchError(loadMediaInput(value));
    expect(error.reason).toBe('bad_url');
  });
});

// Every request to another server goes through the one outbound client (src/outbound/, see
// "Outbound HTTP: one client" in docs/architecture.md): no other file of src/ may follow
// redirects, walk an error's cause chain, or make a request with undici or fetch.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discard, explainFailure, FetchError, readCapped, send, type SendOptions } from '../src/outbound/client.js';
import { createFetchDispatcher, createTrustedDispatcher } from '../src/outbound/connection.js';
import { startHttpsServer, TEST_CA, type TestHttpsServer } from './helpers/https-server.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

/**
 * Where the rules do not apply: the client itself; the SDK (`client/`, built alone into
 * packages/client, imports nothing of ours, runs on any runtime's `fetch`) and the CLI's client
 * commands over it, which talk to a mediagate server, not to URLs a user gave us.
 */
// outages.ts walks the causes of database and storage errors to tell an outage (pg and the S3
// client wrap what the socket threw), not of an outbound request's.
const EXEMPT = ['outbound/', 'client/', 'cli/client-commands/', 'outages.ts'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(src, path).split('\\').join('/')] : [];
  });
}

/** Block comments and whole-line comments out, line numbers kept: prose may name what code may not do. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' ')).replace(/^\s*\/\/.*$/gm, '');
}

const RULES: readonly { readonly pattern: RegExp; readonly why: string }[] = [
  // `options.cause` is a constructor passing a cause on, not a walk.
  { pattern: /(?<!\boptions\??)\.cause\b|\[\s*['"]cause['"]\s*\]|['"]cause['"]\s+in\b/, why: 'reads an error cause (explainFailure walks the chain)' },
  // A header read: a vertex channel's `location` (its Google Cloud region) is not one.
  { pattern: /headers\s*(\.location\b|\[\s*['"]location['"]\s*\]|\.get\(\s*['"]location['"]\s*\))/i, why: 'reads a Location header (send follows redirects)' },
  { pattern: /\b30[12378]\s*,\s*30[12378]\b/, why: 'lists redirect statuses (send follows redirects)' },
  { pattern: /import\s*\(\s*['"]undici['"]\s*\)|import\s+\*\s+as\s+\w+\s+from\s*['"]undici['"]/, why: 'imports all of undici (only src/outbound/ does)' },
  // A method of our own named fetch (declared, or called on an object) is not the global one.
  { pattern: /(?<![.\w]|async\s+|function\s+)fetch\s*\(|globalThis\.fetch\b/, why: 'calls fetch (send is the one client)' },
];

/** What a file may take from undici by value: the body type adapters build. Types are free. */
const UNDICI_VALUES = new Set(['FormData']);

/** Line numbers of value imports from undici other than UNDICI_VALUES (an import may span lines). */
function undiciRequests(text: string): number[] {
  const lines: number[] = [];
  for (const match of text.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s*from\s*['"]undici['"]/g)) {
    if (match[1] !== undefined) continue;
    const names = (match[2] ?? '')
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== '' && !part.startsWith('type '))
      .map((part) => part.split(/\s+as\s+/)[0] ?? part);
    if (names.some((name) => !UNDICI_VALUES.has(name))) lines.push(text.slice(0, match.index).split('\n').length);
  }
  return lines;
}

function outboundViolations(files: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [file, text] of files) {
    if (EXEMPT.some((prefix) => file.startsWith(prefix))) continue;
    const stripped = code(text);
    stripped.split('\n').forEach((line, index) => {
      for (const rule of RULES) if (rule.pattern.test(line)) found.push(`${file}:${index + 1}: ${rule.why}`);
    });
    for (const line of undiciRequests(stripped)) found.push(`${file}:${line}: makes requests with undici (only src/outbound/ does)`);
  }
  return found;
}

describe('outbound: one client for every request to another server', () => {
  it('leaves redirects, cause chains and undici requests to src/outbound/', () => {
    const files = new Map(sourceFiles(src).map((file) => [file, readFileSync(join(src, file), 'utf8')]));
    expect(files.size).toBeGreaterThan(50);
    expect(outboundViolations(files)).toEqual([]);
  });

  it('is used by the media fetcher, channel calls, output copies and webhook deliveries', () => {
    for (const file of ['media/fetcher.ts', 'channels/http.ts', 'channels/output-copy.ts', 'webhooks/dispatcher.ts']) {
      expect(readFileSync(join(src, file), 'utf8'), file).toMatch(/import \{[^}]*\bsend\b[^}]*\} from '\.\.\/outbound\/client\.js'/);
    }
  });
});

describe('outbound: the checker itself', () => {
  it('finds what the callers used to write themselves, and only that', () => {
    const files = new Map([
      ['webhooks/walk.ts', 'for (let at: unknown = err; at instanceof Error; at = at.cause) {}\n'],
      [
        'channels/redirects.ts',
        "const REDIRECTS = new Set([301, 302, 303, 307, 308]);\nconst next = response.headers.location;\nconst h = headers['Location'];\n",
      ],
      ['media/get.ts', "const r = await fetch(url);\nimport {\n  Agent,\n  type Dispatcher,\n} from 'undici';\nconst u = await import('undici');\n"],
      [
        'channels/form.ts',
        "import { FormData } from 'undici';\nimport type { Dispatcher } from 'undici';\nimport { type Dispatcher as D, type FormData as F } from 'undici';\n",
      ],
      [
        'errors.ts',
        'super(message, options?.cause === undefined ? undefined : { cause: options.cause });\n// at = at.cause in a comment\n/* headers.location */\nawait cache.fetch(key);\nasync fetch(key: string): Promise<boolean> {\n',
      ],
      ['outbound/client.ts', "for (let at: unknown = err; at instanceof Error; at = at.cause) {}\nimport { request } from 'undici';\n"],
      ['client/http.ts', 'current = current.cause;\n'],
    ]);
    expect(outboundViolations(files)).toEqual([
      'webhooks/walk.ts:1: reads an error cause (explainFailure walks the chain)',
      'channels/redirects.ts:1: lists redirect statuses (send follows redirects)',
      'channels/redirects.ts:2: reads a Location header (send follows redirects)',
      'channels/redirects.ts:3: reads a Location header (send follows redirects)',
      'media/get.ts:1: calls fetch (send is the one client)',
      'media/get.ts:6: imports all of undici (only src/outbound/ does)',
      'media/get.ts:2: makes requests with undici (only src/outbound/ does)',
    ]);
  });
});

describe('outbound: send routes and checks every hop', () => {
  // The trusted origin is plain HTTP on loopback (an operator's upstream may be); the redirect
  // target is HTTPS on loopback too, which the address policy refuses unless allowed.
  let target: TestHttpsServer;
  let trustedServer: Server;
  let trustedOrigin = '';
  const trustedPool = createTrustedDispatcher({ keepAliveTimeoutMs: 1_000 });
  const strictPool = createFetchDispatcher({ tls: { ca: TEST_CA } });

  beforeAll(async () => {
    target = await startHttpsServer({
      '/media': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end('bytes'),
      '/big': (_req, res) => res.writeHead(200, { 'content-length': '1000' }).end(Buffer.alloc(1000)),
    });
    trustedServer = createServer((req, res) => {
      if (req.url === '/away') res.writeHead(302, { location: `${target.origin}/media` }).end();
      else if (req.url === '/here') res.writeHead(302, { location: '/ok' }).end();
      else res.writeHead(200).end('ok');
    });
    await new Promise<void>((resolve) => trustedServer.listen(0, '127.0.0.1', resolve));
    trustedOrigin = `http://127.0.0.1:${(trustedServer.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await Promise.all([trustedPool.close(), strictPool.close(), target.close()]);
    trustedServer.closeAllConnections();
    await new Promise<void>((resolve) => trustedServer.close(() => resolve()));
  });

  const base = (): SendOptions => ({ signal: AbortSignal.timeout(5_000), timeoutMs: 5_000, trusted: { origin: trustedOrigin, dispatcher: trustedPool } });
  const failureOf = async (promise: Promise<unknown>): Promise<unknown> =>
    promise.then(
      () => new Error('no failure'),
      (error: unknown) => error,
    );

  it('a redirect from the trusted origin to another host meets the address policy on its connection', async () => {
    const refused = await failureOf(send(`${trustedOrigin}/away`, { ...base(), policed: strictPool, followRedirects: 3 }));
    expect(explainFailure(refused).refused?.range).toBe('loopback');

    const allowed = await send(`${trustedOrigin}/away`, { ...base(), policed: target.dispatcher, followRedirects: 3 });
    expect(allowed.url.href).toBe(`${target.origin}/media`);
    expect((await readCapped(allowed.body, 100))?.toString()).toBe('bytes');
  });

  it('without a policed pool, only the trusted origin is reached', async () => {
    const here = await send(`${trustedOrigin}/here`, { ...base(), followRedirects: 3 });
    expect(here.url.pathname).toBe('/ok');
    discard(here.body);
    const away = await failureOf(send(`${trustedOrigin}/away`, { ...base(), followRedirects: 3 }));
    expect(away).toBeInstanceOf(FetchError);
    expect((away as FetchError).reason).toBe('bad_url');
  });

  it('a 3xx is the answer unless redirects are followed; the limit counts hops', async () => {
    const answer = await send(`${trustedOrigin}/here`, base());
    expect(answer.status).toBe(302);
    discard(answer.body);
    const limited = await failureOf(send(`${trustedOrigin}/here`, { ...base(), followRedirects: 0 }));
    expect((limited as FetchError).reason).toBe('too_many_redirects');
  });

  it('a 2xx that declares more than maxBytes is refused before its body is read; readCapped cuts the rest', async () => {
    const declared = await failureOf(send(`${target.origin}/big`, { ...base(), policed: target.dispatcher, maxBytes: 999 }));
    expect((declared as FetchError).reason).toBe('too_large');
    const read = await send(`${target.origin}/big`, { ...base(), policed: target.dispatcher });
    expect(await readCapped(read.body, 999)).toBeUndefined();
  });
});

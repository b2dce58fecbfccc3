/**
 * The address policy of the one https fetcher: every non-public address is refused, in every
 * spelling, on the first hop and on redirects, by name (through a stub resolver) and by IP
 * literal; an operator's allow-list opens named hosts or ranges. The local HTTPS server counts
 * what reaches it, so "refused" also means "no request was sent".
 */
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyAddress, createAddressPolicy, parseAddress } from '../src/outbound/address-policy.js';
import { fetchHttps } from '../src/media/fetcher.js';
import { FetchError } from '../src/outbound/client.js';
import { createFetchDispatcher, type FetchDispatcherOptions } from '../src/outbound/connection.js';
import { loadConfig, ConfigError } from '../src/config.js';
import { TEST_CA, startHttpsServer, type TestHttpsServer } from './helpers/https-server.js';

const PAYLOAD = Buffer.from('policy bytes');
let server: TestHttpsServer;
let port = 0;
let hits = 0;

beforeAll(async () => {
  server = await startHttpsServer({
    '/ok': (_req, res) => {
      hits += 1;
      res.writeHead(200, { 'content-type': 'image/png' }).end(PAYLOAD);
    },
    '/to-loopback': (_req, res) => res.writeHead(302, { location: `https://127.0.0.1:${port}/ok` }).end(),
    '/to-metadata': (_req, res) => res.writeHead(302, { location: 'https://169.254.169.254/latest/meta-data/' }).end(),
    '/to-v6-loopback': (_req, res) => res.writeHead(302, { location: `https://[::1]:${port}/ok` }).end(),
    '/to-decimal': (_req, res) => res.writeHead(302, { location: `https://2130706433:${port}/ok` }).end(),
  });
  port = Number(new URL(server.origin).port);
});

afterAll(async () => {
  await server.close();
});

/** A resolver that answers from a table and never touches DNS. */
function stubResolver(table: Readonly<Record<string, readonly string[]>>): LookupFunction {
  return (hostname, options, callback) => {
    const answers = table[hostname];
    if (!answers) {
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', undefined);
      return;
    }
    const all: LookupAddress[] = answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (options.all) callback(null, all);
    else callback(null, all[0]?.address ?? '', all[0]?.family);
  };
}

async function fetchWith(url: string, options: FetchDispatcherOptions): Promise<Buffer | FetchError> {
  const dispatcher = createFetchDispatcher({ tls: { ca: TEST_CA }, connectTimeoutMs: 1_000, ...options });
  try {
    return (await fetchHttps(url, { dispatcher, timeoutMs: 3_000 })).bytes;
  } catch (error) {
    if (error instanceof FetchError) return error;
    throw error;
  } finally {
    await dispatcher.close();
  }
}

async function expectRefused(url: string, options: FetchDispatcherOptions = {}): Promise<void> {
  const before = hits;
  const result = await fetchWith(url, options);
  expect(result, url).toBeInstanceOf(FetchError);
  expect((result as FetchError).reason, `${url}: ${(result as FetchError).message}`).toBe('refused');
  expect(hits, 'no request reached the server').toBe(before);
}

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.100.100.200', 'carrierGradeNat'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['192.0.0.170', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'ipv4Mapped loopback'],
    ['::ffff:7f00:1', 'ipv4Mapped loopback'],
    ['::ffff:10.0.0.1', 'ipv4Mapped private'],
    ['::ffff:169.254.169.254', 'ipv4Mapped linkLocal'],
    ['64:ff9b::7f00:1', 'nat64 loopback'],
    ['64:ff9b::a9fe:a9fe', 'nat64 linkLocal'],
    ['64:ff9b:1::a00:1', 'rfc6052'],
    ['::ffff:0:7f00:1', 'rfc6145'],
    ['2002:7f00:1::1', '6to4'],
    ['2001::1', 'teredo'],
    ['2001:db8::1', 'reserved'],
    ['::7f00:1', 'reserved'],
    ['100::1', 'discard'],
  ])('%s is refused (%s)', (text, range) => {
    const address = parseAddress(text);
    expect(address, text).toBeDefined();
    expect(classifyAddress(address!)).toEqual({ public: false, range });
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8', '64:ff9b::808:808'])(
    '%s is public',
    (text) => {
      expect(classifyAddress(parseAddress(text)!)).toEqual({ public: true });
    },
  );

  it.each([
    ['2130706433', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0x7f.0.0.1', '127.0.0.1'],
    ['[::1]', '::1'],
  ])('reads the spelling %s as %s', (text, canonical) => {
    expect(parseAddress(text)?.toString()).toBe(parseAddress(canonical)?.toString());
  });
});

describe('createAddressPolicy', () => {
  it('refuses every non-public address by default and allows nothing by name', () => {
    const policy = createAddressPolicy();
    expect(policy.refusal('127.0.0.1')).toBe('loopback');
    expect(policy.refusal('8.8.8.8')).toBeUndefined();
    expect(policy.refusal('not-an-address')).toBe('not an IP address');
    expect(policy.hostAllowed('localhost')).toBe(false);
  });

  it('allows named hosts, case-insensitively and in every spelling of an IP literal', () => {
    const policy = createAddressPolicy({ hosts: ['Minio.Local', '::1', '127.0.0.1'] });
    expect(policy.hostAllowed('minio.local')).toBe(true);
    expect(policy.hostAllowed('MINIO.LOCAL.')).toBe(true);
    expect(policy.hostAllowed('[0:0::1]')).toBe(true);
    expect(policy.hostAllowed('other.local')).toBe(false);
    // The host allow-list is about names; it opens no address to other names.
    expect(policy.refusal('127.0.0.1')).toBe('loopback');
  });

  it('allows configured ranges only', () => {
    const policy = createAddressPolicy({ private: ['10.0.0.0/8', 'fd00::/8'] });
    expect(policy.refusal('10.9.8.7')).toBeUndefined();
    expect(policy.refusal('::ffff:10.9.8.7')).toBeUndefined();
    expect(policy.refusal('fd12::1')).toBeUndefined();
    expect(policy.refusal('192.168.0.1')).toBe('private');
    expect(policy.refusal('169.254.169.254')).toBe('linkLocal');
  });

  it('allows every address with private: true', () => {
    expect(createAddressPolicy({ private: true }).refusal('169.254.169.254')).toBeUndefined();
  });
});

describe('fetchHttps refuses non-public addresses', () => {
  it.each([
    () => `https://127.0.0.1:${port}/ok`,
    () => `https://2130706433:${port}/ok`,
    () => `https://0x7f000001:${port}/ok`,
    () => `https://0177.0.0.1:${port}/ok`,
    () => `https://127.1:${port}/ok`,
    () => `https://[::1]:${port}/ok`,
    () => `https://[::ffff:127.0.0.1]:${port}/ok`,
    () => `https://[::ffff:7f00:1]:${port}/ok`,
    () => `https://[64:ff9b::7f00:1]:${port}/ok`,
    () => `https://0.0.0.0:${port}/ok`,
    () => 'https://169.254.169.254/latest/meta-data/',
    () => 'https://[fd00:ec2::254]/latest/meta-data/',
    () => 'https://100.100.100.200/latest/meta-data/',
    () => 'https://10.0.0.1/x.png',
    () => 'https://192.168.0.1/x.png',
    () => 'https://224.0.0.1/x.png',
  ])('refuses the IP literal %#', async (url) => {
    await expectRefused(url());
  });

  it.each([
    ['localhost', ['127.0.0.1']],
    ['v6only.test', ['::1']],
    ['metadata.google.internal', ['169.254.169.254']],
    ['intranet.test', ['10.0.0.7', '192.168.3.4']],
    ['mapped.test', ['::ffff:127.0.0.1']],
    ['cgnat.test', ['100.64.1.1']],
  ])('refuses %s, which resolves to %j', async (name, answers) => {
    await expectRefused(`https://${name}:${port}/ok`, { lookup: stubResolver({ [name]: answers }) });
  });

  it('connects only to the allowed answers of a mixed resolution (never the private one)', async () => {
    // 192.0.2.0/24 is refused too, so nothing is left: no connection is attempted at all.
    await expectRefused(`https://mixed.test:${port}/ok`, { lookup: stubResolver({ 'mixed.test': ['192.0.2.1', '127.0.0.1'] }) });
  });

  it('checks the address it connects to: a resolver that changes its answer (DNS rebinding) cannot get through', async () => {
    // First answer public (the check passes), every later answer loopback: each connection is
    // made to the address the guarded lookup returned, so the loopback answer is refused.
    let calls = 0;
    const rebinding: LookupFunction = (hostname, options, callback) => {
      calls += 1;
      stubResolver({ [hostname]: calls === 1 ? ['8.8.8.8'] : ['127.0.0.1'] })(hostname, options, callback);
    };
    const before = hits;
    const dispatcher = createFetchDispatcher({ tls: { ca: TEST_CA }, connectTimeoutMs: 300, lookup: rebinding });
    try {
      for (let i = 0; i < 3; i += 1) {
        const outcome = await fetchHttps(`https://rebind.test:${port}/ok`, { dispatcher, timeoutMs: 1_000 }).catch((error: unknown) => error);
        expect(outcome).toBeInstanceOf(FetchError);
      }
    } finally {
      await dispatcher.close();
    }
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(hits, 'the loopback server was never reached').toBe(before);
  });

  it.each(['/to-loopback', '/to-metadata', '/to-v6-loopback', '/to-decimal'])('re-checks every redirect hop: %s', async (path) => {
    // The first hop is allowed by name; the redirect target is not.
    await expectRefused(`https://localhost:${port}${path}`, {
      allow: { hosts: ['localhost'] },
      lookup: stubResolver({ localhost: ['127.0.0.1'] }),
    });
  });
});

describe('the allow-list opens what an operator names', () => {
  it('fetches an allowed host name whatever it resolves to', async () => {
    const got = await fetchWith(`https://localhost:${port}/ok`, {
      allow: { hosts: ['localhost'] },
      lookup: stubResolver({ localhost: ['127.0.0.1'] }),
    });
    expect(Buffer.isBuffer(got) && got.equals(PAYLOAD)).toBe(true);
  });

  it('fetches an allowed IP literal', async () => {
    const got = await fetchWith(`https://127.0.0.1:${port}/ok`, { allow: { hosts: ['127.0.0.1'] } });
    expect(Buffer.isBuffer(got) && got.equals(PAYLOAD)).toBe(true);
  });

  it('fetches from an allowed private range, by name and by literal', async () => {
    const allow = { private: ['127.0.0.0/8'] };
    expect(Buffer.isBuffer(await fetchWith(`https://127.0.0.1:${port}/ok`, { allow }))).toBe(true);
    const byName = await fetchWith(`https://localhost:${port}/ok`, { allow, lookup: stubResolver({ localhost: ['127.0.0.1'] }) });
    expect(Buffer.isBuffer(byName)).toBe(true);
  });

  it('a range that does not cover the address still refuses', async () => {
    await expectRefused(`https://127.0.0.1:${port}/ok`, { allow: { private: ['10.0.0.0/8'], hosts: ['example.com'] } });
  });

  it('private: true allows every address', async () => {
    expect(Buffer.isBuffer(await fetchWith(`https://127.0.0.1:${port}/ok`, { allow: { private: true } }))).toBe(true);
  });
});

describe('configuration', () => {
  it('is off by default', () => {
    const config = loadConfig({});
    expect(config.fetchAllowHosts).toEqual([]);
    expect(config.fetchAllowPrivate).toBe(false);
  });

  it('reads hosts and ranges', () => {
    const config = loadConfig({ MEDIAGATE_FETCH_ALLOW_HOSTS: 'MinIO.local, 127.0.0.1', MEDIAGATE_FETCH_ALLOW_PRIVATE: '10.0.0.0/8,fd00::/8' });
    expect(config.fetchAllowHosts).toEqual(['minio.local', '127.0.0.1']);
    expect(config.fetchAllowPrivate).toEqual(['10.0.0.0/8', 'fd00::/8']);
    expect(loadConfig({ MEDIAGATE_FETCH_ALLOW_PRIVATE: 'true' }).fetchAllowPrivate).toBe(true);
  });

  it('refuses a malformed range', () => {
    expect(() => loadConfig({ MEDIAGATE_FETCH_ALLOW_PRIVATE: '10.0.0.0/33' })).toThrow(ConfigError);
  });
});

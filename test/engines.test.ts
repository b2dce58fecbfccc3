/**
 * Every package the lockfile installs on this platform accepts the Node lines we run on (issue
 * 14): a dependency that wants a newer Node warns EBADENGINE at install and may break at run.
 * cookie 2.x (wanted by light-my-request) needs Node 22; package.json pins 1.1.1, the same API.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface LockedPackage {
  readonly version?: string;
  readonly engines?: Record<string, string> | string[];
  readonly os?: string[];
  readonly cpu?: string[];
}

const lock = JSON.parse(readFileSync(`${ROOT}package-lock.json`, 'utf8')) as { packages: Record<string, LockedPackage> };
const matches = (list: string[] | undefined, value: string): boolean =>
  list === undefined || (list.some((item) => !item.startsWith('!')) ? list.includes(value) : !list.includes(`!${value}`));

describe('engines in package-lock.json', () => {
  for (const node of ['20.19.0', '24.0.0']) {
    it(`every package installed here accepts Node ${node}`, () => {
      const refused: string[] = [];
      for (const [path, pkg] of Object.entries(lock.packages)) {
        if (path === '' || !matches(pkg.os, process.platform) || !matches(pkg.cpu, process.arch)) continue;
        const range = Array.isArray(pkg.engines) ? undefined : pkg.engines?.['node'];
        if (range && !semver.satisfies(node, range)) refused.push(`${path}@${pkg.version ?? '?'} wants node ${range}`);
      }
      expect(refused).toEqual([]);
    });
  }

  it('light-my-request gets cookie 1.x (2.x wants Node 22), and Fastify inject still sends cookies', async () => {
    expect(lock.packages['node_modules/light-my-request/node_modules/cookie']?.version).toMatch(/^1\./);
    const { default: Fastify } = await import('fastify');
    const app = Fastify();
    app.get('/', (request) => Promise.resolve({ cookie: request.headers.cookie ?? null }));
    const response = await app.inject({ method: 'GET', url: '/', cookies: { a: 'b c' } });
    expect(response.json()).toEqual({ cookie: 'a=b%20c' });
    await app.close();
  });
});

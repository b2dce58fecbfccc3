import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The README's install of the client, where its `import ... from '@mediagate/client'` is: the
 * `npm pack` it gives writes the tarball outside the checkout (--pack-destination), under the
 * name the `npm install` line that follows uses, and leaves the checkout as it was; a tarball
 * packed without the flag would be ignored by git. The destination is this spec's own directory
 * instead of the README's /tmp, so concurrent runs do not share a file.
 */

const root = new URL('..', import.meta.url).pathname;
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const scratch = mkdtempSync(join(tmpdir(), 'mediagate-readme-install-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const git = (...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8' });

describe('README: installing the client', () => {
  const snippet = readme.indexOf("from '@mediagate/client'");
  const before = readme.slice(0, snippet);
  const pack = /^npm pack (.*) --pack-destination (\S+)/m.exec(before.slice(before.lastIndexOf('```sh')));
  const install = /^.*npm install (\S+\.tgz)$/m.exec(before.slice(before.lastIndexOf('```sh')));

  it('gives the pack and install commands right before the import', () => {
    expect(snippet).toBeGreaterThan(-1);
    expect(pack, 'an npm pack line with --pack-destination').not.toBeNull();
    expect(install, 'an npm install line of the tarball').not.toBeNull();
    expect(install?.[1]?.startsWith(`${pack?.[2] ?? ''}/`)).toBe(true);
  });

  it('packs outside the checkout, under the name the install line uses, and leaves the checkout clean', () => {
    const untracked = git('status', '--porcelain', '--untracked-files=all');
    const args = (pack?.[1] ?? '').split(' ');
    const printed = execFileSync('npm', ['pack', ...args, '--pack-destination', scratch, '--json'], { cwd: root, encoding: 'utf8' });
    const [first] = JSON.parse(printed) as { filename: string }[];
    expect(first?.filename).toBe(install?.[1]?.split('/').at(-1));
    expect(existsSync(join(scratch, first?.filename ?? ''))).toBe(true);
    expect(git('status', '--porcelain', '--untracked-files=all')).toBe(untracked);
  });

  it('a tarball packed into the checkout would be ignored by git', () => {
    expect(git('check-ignore', 'mediagate-client-0.1.0.tgz').trim()).toBe('mediagate-client-0.1.0.tgz');
  });
});

// The second Node line (docs/ci.md) reruns only the specs that depend on the line, chiefly the
// SQLite driver seam: src/store/sqlite-driver.ts picks node:sqlite or better-sqlite3 by line. A
// spec that opens SQLite through the seam, itself or through a helper of test/ (openSqlite in
// helpers/ledger.ts), and is left out of that run would pass on Node 20 and never be tried on the
// line users deploy; this spec names each one missing.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NODE_LINE_SPECS, SYSTEM_SPECS, vitestProjects } from './helpers/projects.js';
import { readImports } from './helpers/rooms.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SEAM = 'src/store/sqlite-driver.ts';

function testFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : testFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The files of test/ and src/ a file loads (relative specifiers, `.js` read as `.ts`); type-only imports load nothing. */
function loadedFiles(file: string, text: string): string[] {
  return readImports(file, text)
    .filter((imported) => !imported.typeOnly && imported.specifier.startsWith('.'))
    .map((imported) => posix.normalize(posix.join(posix.dirname(file), imported.specifier)).replace(/\.js$/, '.ts'));
}

/**
 * The files of test/ that open SQLite through the seam: those that import it, and those that
 * import (through files of test/ only) one that does. The store in src/ is not followed: every
 * server opens SQLite that way, and the line-dependent part of that is the store's own specs.
 */
function seamUsers(files: ReadonlyMap<string, string>): string[] {
  const imports = new Map([...files].map(([file, text]) => [file, loadedFiles(file, text)]));
  const users = new Set<string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const [file, targets] of imports) {
      if (!users.has(file) && targets.some((target) => target === SEAM || users.has(target))) {
        users.add(file);
        grew = true;
      }
    }
  }
  return [...users].sort();
}

const projectName = (name: string | { label: string } | undefined): string => (typeof name === 'object' ? name.label : (name ?? ''));

function includedBy(names: readonly string[]): string[] {
  return vitestProjects({ nodeLine: true, sqlite: true, postgres: false })
    .filter((project) => names.includes(projectName(project.test?.name)))
    .flatMap((project) => project.test?.include ?? []);
}

describe('the second Node line runs every spec that opens SQLite through the driver seam', () => {
  const files = new Map(testFiles('test').map((file) => [file, readFileSync(join(root, file), 'utf8')]));
  const specs = seamUsers(files).filter((file) => file.endsWith('.test.ts'));

  it('finds the seam through helpers too', () => {
    // The seam's own spec imports it; the usage specs reach it through helpers/ledger.ts only.
    expect(specs).toContain('test/sqlite-driver.test.ts');
    expect(specs).toContain('test/usage-http.test.ts');
    // Made-up files, their names built from parts (no such files exist).
    const made = (...parts: string[]): string => parts.join('/');
    const [spec, helper, seam] = [made('test', 'made-up.test.ts'), made('test', 'helpers', 'made-up.ts'), made('..', '..', 'src', 'store', 'sqlite-driver.js')];
    const throughHelper = new Map([
      [spec, `import { x } from './${made('helpers', 'made-up.js')}';`],
      [helper, `export { openSqlite as x } from '${seam}';`],
    ]);
    expect(seamUsers(throughHelper)).toEqual([helper, spec].sort());
    expect(seamUsers(new Map([[spec, `import type { SqliteConnection } from '${seam.slice(3)}';`]]))).toEqual([]);
  });

  it('has each of them in the node-line projects', () => {
    const included = new Set(includedBy(['node-line', 'node-line-system']));
    expect(specs.filter((file) => !included.has(file))).toEqual([]);
  });

  it('lists only files that exist, and runs the soak and kill ones one at a time', () => {
    const existing = new Set(files.keys());
    expect([...NODE_LINE_SPECS, ...SYSTEM_SPECS].filter((file) => !existing.has(file))).toEqual([]);
    const system = vitestProjects({ nodeLine: true, sqlite: true, postgres: false }).find((project) => projectName(project.test?.name) === 'node-line-system');
    expect(system?.test?.fileParallelism).toBe(false);
  });
});

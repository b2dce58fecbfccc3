// The arrows between rooms stay one way: every import in src/ is checked against the rooms table
// of docs/architecture.md, read from the doc (change the doc, not this spec, to move a room).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles } from './helpers/import-cycles.js';
import { forbidden, parseRoomsTable, readImports, roomOf, type RoomRule } from './helpers/rooms.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(src, path).split('\\').join('/')] : [];
  });
}

/** `./x.js` imported from `tasks/service.ts` is `tasks/x.ts`; packages and node: builtins are not ours. */
function resolveOurs(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const path = posix.normalize(posix.join(posix.dirname(from), specifier));
  return path.replace(/\.js$/, '.ts');
}

function violations(rules: RoomRule[], files: Map<string, string>): string[] {
  const found: string[] = [];
  for (const [from, text] of files) {
    for (const imported of readImports(from, text)) {
      const to = resolveOurs(from, imported.specifier);
      if (to === undefined) continue;
      if (to.startsWith('..')) {
        found.push(`${from}:${imported.line}: imports ${imported.specifier}, outside src/`);
        continue;
      }
      const why = forbidden(from, to, imported.typeOnly, rules);
      if (why) found.push(`${from}:${imported.line}: ${why}`);
    }
  }
  return found;
}

/**
 * The static imports between files of src/ (type-only ones too: a type import still ties the two
 * files' designs together); dynamic `import()` expressions load on demand and are left out.
 */
function staticImports(files: Map<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [from, text] of files) {
    const targets = readImports(from, text)
      .filter((imported) => !imported.dynamic)
      .flatMap((imported) => resolveOurs(from, imported.specifier) ?? []);
    graph.set(from, [...new Set(targets)]);
  }
  return graph;
}

const rules = parseRoomsTable(readFileSync(join(root, 'docs/architecture.md'), 'utf8'));

describe('architecture: the rooms table of docs/architecture.md', () => {
  it('places every file of src/ in a room', () => {
    const homeless = sourceFiles(src).filter((file) => roomOf(file, rules) === undefined);
    expect(homeless).toEqual([]);
  });

  it('allows every import in src/', () => {
    const files = new Map(sourceFiles(src).map((file) => [file, readFileSync(join(src, file), 'utf8')]));
    expect(files.size).toBeGreaterThan(50);
    expect(violations(rules, files)).toEqual([]);
  });

  it('has no import cycle between files', () => {
    const files = new Map(sourceFiles(src).map((file) => [file, readFileSync(join(src, file), 'utf8')]));
    expect(importCycles(staticImports(files)).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('names only rooms and paths that exist', () => {
    const files = sourceFiles(src);
    const entries = rules.flatMap((rule) => [...rule.rooms, ...rule.imports, ...rule.typeImports]);
    const missing = entries.filter((entry) => !files.some((file) => file === entry || file.startsWith(entry.replace(/\/?$/, '/')) || file === `${entry}.ts`));
    expect(missing).toEqual([]);
  });
});

describe('architecture: the checker itself', () => {
  const table = [
    '## Rooms, and what each may import',
    '',
    '| folder | owns | may import |',
    '|---|---|---|',
    '| `errors.ts` | codes | nothing of ours |',
    '| `media/` | bytes | nothing of ours |',
    '| `catalog/` | rows (see `a|b`) | `media/`, `errors.ts` |',
    '| `engines/` | renders | `media/`, `catalog/geometry` |',
    '| `tasks/` | tasks | `catalog/`, `engines/` (types) |',
    '| `auth/` | keys | `tasks/store` |',
    '| `http/` | server | everything above |',
  ].join('\n');
  const synthetic = parseRoomsTable(table);

  it('reads rooms, imports, type-only imports and "everything above"', () => {
    expect(synthetic.find((rule) => rule.rooms.includes('tasks/'))).toEqual({ rooms: ['tasks/'], imports: ['catalog/'], typeImports: ['engines/'] });
    expect(synthetic.find((rule) => rule.rooms.includes('http/'))?.imports).toEqual(['errors.ts', 'media/', 'catalog/', 'engines/', 'tasks/', 'auth/']);
    expect(synthetic[0]).toEqual({ rooms: ['errors.ts'], imports: [], typeImports: [] });
  });

  it('fails on a forbidden arrow, and only on it', () => {
    const files = new Map([
      ['media/fetcher.ts', "import { ApiError } from '../errors.js';\n"],
      ['catalog/validate.ts', "import { sniff } from '../media/header.js';\nimport type { Row } from './types.js';\n"],
      ['engines/render.ts', "import { size } from '../catalog/geometry.js';\nexport { rows } from '../catalog/rows.js';\n"],
      ['tasks/service.ts', "import type { Engine } from '../engines/types.js';\nconst e = await import('../engines/render.js');\n"],
      ['auth/keys.ts', "import { KeyStore } from '../tasks/store/keys.js';\nimport { TaskService } from '../tasks/service.js';\n"],
      ['http/app.ts', "import { keys } from '../auth/keys.js';\nimport { x } from '../cli/main.js';\n"],
    ]);
    expect(violations(synthetic, files)).toEqual([
      'media/fetcher.ts:1: media/ may not import errors.ts',
      'engines/render.ts:2: engines/ may not import catalog/rows.ts',
      'tasks/service.ts:2: tasks/ may not import engines/render.ts (it may import types only)',
      'auth/keys.ts:2: auth/ may not import tasks/service.ts',
      'http/app.ts:2: cli/main.ts is in no room of the table',
    ]);
  });

  it('reads type-only imports, re-exports and dynamic imports', () => {
    const text = [
      "import type { A } from './a.js';",
      "import { type B, type C } from './b.js';",
      "import { type D, E } from './d.js';",
      "export type { F } from './f.js';",
      "export * from './g.js';",
      "const h = await import('./h.js');",
      "let i: import('./i.js').I;",
    ].join('\n');
    expect(readImports('x.ts', text).map(({ specifier, typeOnly }) => `${specifier}:${typeOnly}`)).toEqual([
      './a.js:true',
      './b.js:true',
      './d.js:false',
      './f.js:true',
      './g.js:false',
      './h.js:false',
      './i.js:true',
    ]);
  });

  it('finds each import cycle once, type-only imports included, dynamic imports left out', () => {
    const files = new Map([
      ['a.ts', "import { b } from './b.js';\n"],
      ['b.ts', "import type { C } from './c.js';\n"],
      ['c.ts', "import { a } from './a.js';\nimport { d } from './d.js';\n"],
      ['d.ts', 'export const d = 1;\n'],
      ['e.ts', "const f = await import('./f.js');\n"],
      ['f.ts', "import { e } from './e.js';\n"],
      ['g.ts', "export { g } from './g.js';\n"],
    ]);
    expect(importCycles(staticImports(files))).toEqual([
      ['a.ts', 'b.ts', 'c.ts', 'a.ts'],
      ['g.ts', 'g.ts'],
    ]);
  });

  it('rejects a "may import" cell it cannot read', () => {
    expect(() => parseRoomsTable(table.replace('`tasks/store` |', '`tasks/store` and maybe http |'))).toThrow(/cannot read/);
  });
});

describe('architecture: one SQLite driver seam', () => {
  // better-sqlite3 12 aborts the process on Node 24 when its statements are collected at exit
  // (the reason for src/store/sqlite-driver.ts); a spec that opened it directly crashed its
  // test process there. Specs and sources open SQLite through openSqlite, which picks the driver.
  it('loads better-sqlite3 only in src/store/sqlite-driver.ts, in src/ and in the specs', () => {
    const specs = join(root, 'test');
    const specFiles = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : specFiles(path);
        return entry.name.endsWith('.ts') ? [path] : [];
      });
    const all = [...sourceFiles(src).map((file) => join(src, file)), ...specFiles(specs)];
    const loading = all.filter((path) => /^import (?!type )[^;]*from 'better-sqlite3'|\)\('better-sqlite3'\)/m.test(readFileSync(path, 'utf8')));
    expect(loading.map((path) => relative(root, path))).toEqual(['src/store/sqlite-driver.ts']);
  });
});

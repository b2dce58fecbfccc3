// The rooms table of docs/architecture.md, read from the doc itself, and the imports of a source
// file, read with the TypeScript parser. test/architecture.test.ts checks one against the other,
// so the doc is the single statement of which room may import which.
import ts from 'typescript';

/** One row of the table: the rooms it names and what they may import. */
export interface RoomRule {
  /** Paths relative to src/: `tasks/` (a folder) or `config.ts` (a top-level file). */
  rooms: string[];
  /** Paths they may import at run time (and for types). */
  imports: string[];
  /** Paths they may import for types only (`import type`). */
  typeImports: string[];
}

export interface Import {
  specifier: string;
  typeOnly: boolean;
  /** `import('./x.js')` as an expression: loaded when run, not when the importing module loads. */
  dynamic: boolean;
  line: number;
}

const HEADING = '## Rooms, and what each may import';

/**
 * Reads the first table under HEADING. Columns: rooms (backticked paths), what they own (free
 * text), and what they may import: backticked paths, each optionally followed by `(types)`, other
 * parenthesised text being a note;
 * "everything above" means every room of the rows before; "nothing of ours" means none. Text in
 * that column outside backticks and these phrases is an error, so the column stays checkable.
 */
export function parseRoomsTable(markdown: string): RoomRule[] {
  const start = markdown.indexOf(HEADING);
  if (start < 0) throw new Error(`docs/architecture.md has no "${HEADING}" section`);
  const lines = markdown.slice(start).split('\n').slice(1);
  const first = lines.findIndex((line) => line.startsWith('|'));
  if (first < 0) throw new Error('the rooms section has no table');
  const rows: string[] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line);
  }
  const rules: RoomRule[] = [];
  for (const row of rows) {
    const cells = splitCells(row);
    if (cells.length !== 3) throw new Error(`rooms table row has ${cells.length} cells, want 3: ${row}`);
    const [roomCell = '', , importCell = ''] = cells;
    const rooms = backticked(roomCell);
    if (rooms.length === 0) throw new Error(`rooms table row names no room: ${row}`);
    rules.push({ rooms, ...parseImportCell(importCell, rules, row) });
  }
  return rules;
}

function splitCells(row: string): string[] {
  // A `|` inside backticks (e.g. `keys create|list|revoke`) is text, not a column break.
  const cells: string[] = [];
  let cell = '';
  let inCode = false;
  for (const char of row.trim().slice(1, -1)) {
    if (char === '`') inCode = !inCode;
    if (char === '|' && !inCode) {
      cells.push(cell.trim());
      cell = '';
    } else cell += char;
  }
  cells.push(cell.trim());
  return cells;
}

function backticked(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '');
}

function parseImportCell(cell: string, above: RoomRule[], row: string): Omit<RoomRule, 'rooms'> {
  const imports: string[] = [];
  const typeImports: string[] = [];
  let rest = cell;
  if (/everything above/.test(rest)) {
    for (const rule of above) imports.push(...rule.rooms);
    rest = rest.replace(/everything above/, '');
  }
  rest = rest.replace(/nothing of ours/, '');
  rest = rest.replace(/`([^`]+)`(\s*\(types\))?/g, (_all, path: string, types: string | undefined) => {
    (types ? typeImports : imports).push(path);
    return '';
  });
  // Other parenthesised words are a reader's note: `engines/types.ts` (the engine contract).
  rest = rest.replace(/\([^)]*\)/g, '');
  if (rest.replace(/[,\s]|and/g, '') !== '') throw new Error(`rooms table: cannot read "may import" cell (left: "${rest.trim()}"): ${row}`);
  return { imports, typeImports };
}

/** The imports and re-exports of one file, static and dynamic, with whether each is type-only. */
export function readImports(fileName: string, source: string): Import[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Import[] = [];
  const add = (node: ts.Node, specifier: ts.Expression | undefined, typeOnly: boolean, dynamic = false): void => {
    if (specifier && ts.isStringLiteralLike(specifier)) {
      found.push({ specifier: specifier.text, typeOnly, dynamic, line: file.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const allNamedTypes = named !== undefined && named.length > 0 && !clause?.name && named.every((element) => element.isTypeOnly);
      add(node, node.moduleSpecifier, clause?.isTypeOnly === true || allNamedTypes);
    } else if (ts.isExportDeclaration(node)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      const allNamedTypes = named !== undefined && named.length > 0 && named.every((element) => element.isTypeOnly);
      add(node, node.moduleSpecifier, node.isTypeOnly || allNamedTypes);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node, node.arguments[0], false, true);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** `tasks/upstream/cancel.ts` is in room `tasks/upstream/`; a file is in the room of the longest path that holds it. */
export function roomOf(path: string, rules: RoomRule[]): string | undefined {
  let best: string | undefined;
  for (const room of rules.flatMap((rule) => rule.rooms)) {
    if (covers(room, path) && (best === undefined || room.length > best.length)) best = room;
  }
  return best;
}

/** `tasks/` and `tasks/upstream` cover `tasks/upstream/cancel.ts`; `config.ts` covers itself only. */
export function covers(entry: string, path: string): boolean {
  if (entry.endsWith('.ts')) return path === entry;
  const folder = entry.replace(/\/$/, '');
  return path === `${folder}.ts` || path.startsWith(`${folder}/`);
}

/**
 * Why importing `to` from `from` (both relative to src/) breaks the table, or undefined when it
 * may. Imports within one room are free.
 */
export function forbidden(from: string, to: string, typeOnly: boolean, rules: RoomRule[]): string | undefined {
  const fromRoom = roomOf(from, rules);
  if (fromRoom === undefined) return `${from} is in no room of the table`;
  const toRoom = roomOf(to, rules);
  if (toRoom === undefined) return `${to} is in no room of the table`;
  if (fromRoom === toRoom) return undefined;
  const rule = rules.find((candidate) => candidate.rooms.includes(fromRoom));
  if (!rule) return `${fromRoom} has no rule`;
  if (rule.imports.some((entry) => covers(entry, to))) return undefined;
  if (typeOnly && rule.typeImports.some((entry) => covers(entry, to))) return undefined;
  const typesNote = rule.typeImports.some((entry) => covers(entry, to)) ? ' (it may import types only)' : '';
  return `${fromRoom} may not import ${to}${typesNote}`;
}

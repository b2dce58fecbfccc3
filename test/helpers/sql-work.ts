import { execFile } from 'node:child_process';

/**
 * What the work-count specs (test/growth.test.ts, test/channel-slots.test.ts) share to measure a
 * statement's work rather than its time: statements inlined for Debian's sqlite3 shell (whose
 * `.stats on` prints virtual machine steps), the shell itself, and PostgreSQL's plan nodes.
 */

/** One SQL literal for the sqlite3 shell. */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value !== 'string') throw new Error(`no SQL literal for ${typeof value}`);
  return `'${value.replaceAll("'", "''")}'`;
}

/** The statement's text with its `?` placeholders replaced by its values (none of our texts has a `?` of its own). */
export function inlineSql(statement: { readonly text: string; readonly values: readonly unknown[] }): string {
  let next = 0;
  return statement.text.replace(/\?/g, () => sqlLiteral(statement.values[next++]));
}

/** Runs a script in the sqlite3 shell on `file`; its output. */
export async function sqliteShell(file: string, script: string): Promise<string> {
  const child = execFile('sqlite3', ['-bail', file], { maxBuffer: 256 * 1024 * 1024 });
  const output = new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`sqlite3 exited ${code}: ${err}`))));
  });
  child.stdin?.end(script);
  return output;
}

/** A node of PostgreSQL's `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` plan. */
export interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Shared Hit Blocks'?: number;
  readonly 'Shared Read Blocks'?: number;
  readonly Plans?: readonly PlanNode[];
}

/** The node and every node below it. */
export function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

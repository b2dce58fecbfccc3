import type { Dialect, Operation, OperationText } from './dialect.js';

/**
 * The mechanism of the operation table (operations.ts): a store operation is declared once, as
 * a row that names its statement (sql/), what the statement's result is ('run': the number of
 * rows it changed; 'one': its first row, or undefined; 'all': its rows), how the method's
 * arguments become the statement's parameters, and how the result becomes the method's value.
 * Both runners (sqlite-store.ts, postgres-store.ts) execute rows through the three primitives of
 * `Runner`; the Store interface's entry for the row is derived from it (`Bound`).
 *
 * An operation of several statements is a row too: its body is a generator that yields each
 * statement (`yield* one(...)`) and receives its result, so it is written once and runs on both
 * databases. SQLite runs it to the end synchronously inside one transaction (its transactions are
 * synchronous functions: nothing else may run on the connection in between); PostgreSQL awaits
 * each statement, on one client inside BEGIN/COMMIT when the row is `atomic`, else on the pool.
 */

/** What a statement's execution returns, by result kind. */
export type ResultKind = 'run' | 'one' | 'all';

/** One statement to execute, as a multi-statement body yields it. */
export interface Step {
  readonly kind: ResultKind;
  readonly op: Operation<object, unknown>;
  readonly params: object;
}

/** A multi-statement body: yields steps, receives each step's result, returns the operation's value. */
export type Steps<T> = Generator<Step, T, unknown>;

/** What a runner gives the table: a statement's three result kinds, and a way to run a body. */
export interface Runner {
  readonly dialect: Dialect;
  /** Runs a statement; the number of rows it changed. */
  changes<P extends object>(op: Operation<P, unknown>, params: P): number | Promise<number>;
  /** Runs a statement; its first row. */
  first<P extends object, R>(op: Operation<P, R>, params: P): R | undefined | Promise<R | undefined>;
  /** Runs a statement; its rows. */
  rows<P extends object, R>(op: Operation<P, R>, params: P): R[] | Promise<R[]>;
  /** Runs a multi-statement body to its end; in one transaction when `atomic`. */
  steps<T>(atomic: boolean, body: () => Steps<T>): Promise<T>;
}

/** A row of the table: the statements it runs (for the SQL snapshots) and how it is called. */
export interface Row<A extends unknown[], T> {
  readonly statements: readonly OperationText[];
  call(runner: Runner, args: A): Promise<T>;
}

/** The Store methods a table declares: each row a method of the same name. */
export type Bound<Table> = {
  [K in keyof Table]: Table[K] extends Row<infer A, infer T> ? (...args: A) => Promise<T> : never;
};

/** A statement that returns no rows (or whose rows are not read): `result` turns the changed-row count into the value. */
export function run<A extends unknown[], P extends object, T>(op: Operation<P, unknown>, params: (...args: A) => P, result: (changes: number) => T): Row<A, T> {
  return {
    statements: [op],
    async call(runner, args) {
      return result(await runner.changes(op, params(...args)));
    },
  };
}

/** A statement whose first row (undefined when none) `result` turns into the value. */
export function one<A extends unknown[], P extends object, R, T>(op: Operation<P, R>, params: (...args: A) => P, result: (row: R | undefined) => T): Row<A, T> {
  return {
    statements: [op],
    async call(runner, args) {
      return result(await runner.first(op, params(...args)));
    },
  };
}

/** A statement whose rows `result` turns into the value. */
export function all<A extends unknown[], P extends object, R, T>(op: Operation<P, R>, params: (...args: A) => P, result: (rows: R[]) => T): Row<A, T> {
  return {
    statements: [op],
    async call(runner, args) {
      return result(await runner.rows(op, params(...args)));
    },
  };
}

/**
 * An operation of several statements (`statements` lists them all, for the snapshots), written
 * once as a generator; `atomic`: in one transaction on PostgreSQL too (SQLite always runs a body
 * in one transaction: it costs one commit instead of several, and nothing can interleave anyway).
 */
export function steps<A extends unknown[], T>(
  statements: readonly OperationText[],
  atomic: boolean,
  body: (dialect: Dialect, ...args: A) => Steps<T>,
): Row<A, T> {
  return {
    statements,
    call(runner, args) {
      return runner.steps(atomic, () => body(runner.dialect, ...args));
    },
  };
}

// The statements of a body: `const row = yield* first(op, params)`. The runner answers each step
// with the result its kind names, which is what the casts below state.

export function* changes<P extends object>(op: Operation<P, unknown>, params: P): Steps<number> {
  return (yield { kind: 'run', op, params }) as number;
}

export function* first<P extends object, R>(op: Operation<P, R>, params: P): Steps<R | undefined> {
  return (yield { kind: 'one', op, params }) as R | undefined;
}

export function* rows<P extends object, R>(op: Operation<P, R>, params: P): Steps<R[]> {
  return (yield { kind: 'all', op, params }) as R[];
}

/** Runs a body on a synchronous runner (SQLite): each step's result goes straight back in. */
export function drive<T>(body: Steps<T>, execute: (step: Step) => unknown): T {
  let next = body.next();
  while (!next.done) next = body.next(execute(next.value));
  return next.value;
}

/** Runs a body on an asynchronous runner (PostgreSQL): each step awaited in turn. */
export async function driveAsync<T>(body: Steps<T>, execute: (step: Step) => Promise<unknown>): Promise<T> {
  let next = body.next();
  while (!next.done) next = body.next(await execute(next.value));
  return next.value;
}

/** Executes one step with a runner's primitives. */
export function execute(runner: Pick<Runner, 'changes' | 'first' | 'rows'>, step: Step): unknown {
  if (step.kind === 'run') return runner.changes(step.op, step.params);
  if (step.kind === 'one') return runner.first(step.op, step.params);
  return runner.rows(step.op, step.params);
}

// Value helpers for rows' results.

/** A guarded transition: it took effect when it changed exactly one row. */
export const won = (changed: number): boolean => changed === 1;

/** The changed-row count itself. */
export const count = (changed: number): number => changed;

/** No value. */
export const nothing = (): void => undefined;

/** A row mapper lifted over "maybe a row". */
export const maybe =
  <R, T>(map: (row: R) => T) =>
  (row: R | undefined): T | undefined =>
    row === undefined ? undefined : map(row);

/** A row mapper lifted over the rows. */
export const each =
  <R, T>(map: (row: R) => T) =>
  (rows: R[]): T[] =>
    rows.map(map);

/**
 * A class whose prototype has one method per row of `table`: a runner extends it, implements the
 * Runner primitives, and so has every table operation without naming any. A runner may still
 * define a method of the same name (its own prototype comes first), but the table holds only
 * what both runners share.
 */
export function tableBase<Table extends Record<string, Row<never, unknown>>>(table: Table): abstract new () => Bound<Table> {
  abstract class TableStore {}
  for (const [name, row] of Object.entries(table)) {
    Object.defineProperty(TableStore.prototype, name, {
      value: function (this: Runner, ...args: unknown[]) {
        // The row's own argument types are Bound<Table>'s, which callers are held to.
        return row.call(this, args as never);
      },
      writable: true,
      configurable: true,
    });
  }
  // The methods above are Bound<Table>'s, added by name: TypeScript cannot see that from the loop.
  return TableStore as abstract new () => Bound<Table>;
}

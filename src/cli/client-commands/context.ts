import { Command, InvalidArgumentError, type CommanderError } from 'commander';
import {
  AbortError,
  APIError,
  AuthenticationError,
  BudgetExceededError,
  ConflictError,
  ConnectionError,
  Mediagate,
  MediagateAdmin,
  MediagateError,
  NotFoundError,
  PermissionDeniedError,
  TaskFailedError,
  ValidationError,
} from '../../client/index.js';

/**
 * Exit codes of the client commands (also in docs/guides/cli.md):
 * 0 done; 1 any other failure (network, server error, rate limit); 2 usage (bad flags, unreadable
 * file, bad base URL); 3 the server refused a parameter; 4 no key or a key the server refused
 * (a client key on an admin command too); 5 the task ended failed or cancelled; 6 no such task,
 * model, webhook endpoint or key; 7 conflict (a completed or failed task cannot be cancelled, an
 * idempotency key still in use); 8 the key's budget cannot hold the task (402
 * budget_exceeded); 130 interrupted by Ctrl-C while waiting (the task keeps running).
 */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  validation: 3,
  auth: 4,
  taskFailed: 5,
  notFound: 6,
  conflict: 7,
  budget: 8,
  interrupted: 130,
  terminated: 143,
} as const;

/** An error the CLI itself decides, with its exit code; an empty message prints nothing more. */
export class CliError extends Error {
  override readonly name: string = 'CliError';
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}

export const usageError = (message: string): CliError => new CliError(EXIT.usage, message);

export interface ConnectionFlags {
  readonly baseUrl?: string;
  readonly apiKey?: string;
}

export function addConnectionOptions(command: Command): Command {
  return command
    .option('--base-url <url>', 'service URL (default: $MEDIAGATE_BASE_URL, else http://127.0.0.1:8080)')
    .option('--api-key <key>', 'API key (default: $MEDIAGATE_API_KEY)');
}

export function makeClient(flags: ConnectionFlags): Mediagate {
  const apiKey = flags.apiKey ?? process.env['MEDIAGATE_API_KEY'];
  if (apiKey === undefined || apiKey.trim() === '') {
    throw new CliError(EXIT.auth, 'mediagate: no API key: pass --api-key or set MEDIAGATE_API_KEY.');
  }
  try {
    return new Mediagate({ apiKey: apiKey.trim(), ...(flags.baseUrl !== undefined ? { baseURL: flags.baseUrl } : {}) });
  } catch (error) {
    if (error instanceof MediagateError) throw usageError(`mediagate: ${error.message}`);
    throw error;
  }
}

export interface AdminConnectionFlags {
  readonly baseUrl?: string;
  readonly adminKey?: string;
}

export function addAdminConnectionOptions(command: Command): Command {
  return command
    .option('--base-url <url>', 'service URL (default: $MEDIAGATE_BASE_URL, else http://127.0.0.1:8080)')
    .option('--admin-key <key>', 'an admin key (default: $MEDIAGATE_ADMIN_KEY)');
}

export function makeAdminClient(flags: AdminConnectionFlags): MediagateAdmin {
  const apiKey = flags.adminKey ?? process.env['MEDIAGATE_ADMIN_KEY'];
  if (apiKey === undefined || apiKey.trim() === '') {
    throw new CliError(EXIT.auth, 'mediagate: no admin key: pass --admin-key or set MEDIAGATE_ADMIN_KEY.');
  }
  try {
    return new MediagateAdmin({ apiKey: apiKey.trim(), ...(flags.baseUrl !== undefined ? { baseURL: flags.baseUrl } : {}) });
  } catch (error) {
    if (error instanceof MediagateError) throw usageError(`mediagate: ${error.message}`);
    throw error;
  }
}

/** Commander's own errors (unknown option, missing value, bad number) exit with the usage code; help exits 0. */
export function usageExit(error: CommanderError): never {
  process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.usage);
}

export function integerArg(value: string): number {
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number)) throw new InvalidArgumentError('not a number.');
  return number;
}

export function positiveIntegerArg(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('must be a positive integer.');
  return number;
}

export function collect(value: string, previous: readonly string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function kindOf(error: APIError): string {
  if (error instanceof ValidationError) return 'validation';
  if (error instanceof AuthenticationError) return 'authentication';
  if (error instanceof PermissionDeniedError) return 'permission';
  if (error instanceof BudgetExceededError) return 'budget';
  if (error instanceof NotFoundError) return 'not_found';
  if (error instanceof ConflictError) return 'conflict';
  return 'api';
}

const TITLES: Readonly<Record<string, string>> = {
  validation: 'the request was refused',
  authentication: 'authentication failed',
  permission: 'this key may not do that',
  budget: 'the key’s budget cannot hold this task',
  not_found: 'not found',
  conflict: 'conflict',
  api: 'the server answered with an error',
};

function detail(title: string, fields: ReadonlyArray<readonly [string, string]>): string {
  const lines = fields.filter(([, value]) => value !== '').map(([name, value]) => `  ${`${name}:`.padEnd(9)}${value}`);
  return [`mediagate: ${title}`, ...lines].join('\n');
}

interface Described {
  readonly exitCode: number;
  /** Printed on stderr; empty prints nothing. */
  readonly text: string;
  /** Printed on stdout with --json. */
  readonly json: Readonly<Record<string, unknown>> | undefined;
}

export function describeError(error: unknown): Described {
  if (error instanceof CliError) {
    const kind =
      error.exitCode === EXIT.usage
        ? 'usage'
        : error.exitCode === EXIT.auth
          ? 'authentication'
          : error.exitCode === EXIT.interrupted || error.exitCode === EXIT.terminated
            ? 'interrupted'
            : 'error';
    return { exitCode: error.exitCode, text: error.message, json: { kind, message: error.message.replace(/^mediagate: /, '') } };
  }
  if (error instanceof APIError) {
    const exitCode =
      error instanceof ValidationError
        ? EXIT.validation
        : error instanceof AuthenticationError || error instanceof PermissionDeniedError
          ? EXIT.auth
          : error instanceof BudgetExceededError
            ? EXIT.budget
            : error instanceof NotFoundError
              ? EXIT.notFound
              : error instanceof ConflictError
                ? EXIT.conflict
                : EXIT.failure;
    const kind = kindOf(error);
    const title = `${TITLES[kind] ?? kind} (HTTP ${error.status})`;
    const text = detail(title, [
      ['code', error.code],
      ['param', error.param],
      ['message', error.message],
      ['request', error.requestId ?? ''],
    ]);
    return {
      exitCode,
      text,
      json: { kind, status: error.status, code: error.code, param: error.param, message: error.message, request_id: error.requestId ?? null },
    };
  }
  if (error instanceof TaskFailedError) {
    const text = detail(`task ${error.taskId} ${error.status}`, [
      ['code', error.code],
      ['param', error.param],
      ['message', error.message],
    ]);
    return { exitCode: EXIT.taskFailed, text, json: undefined };
  }
  if (error instanceof AbortError)
    return { exitCode: EXIT.interrupted, text: `mediagate: ${error.message}`, json: { kind: 'aborted', message: error.message } };
  if (error instanceof ConnectionError)
    return { exitCode: EXIT.failure, text: `mediagate: ${error.message}`, json: { kind: 'connection', message: error.message } };
  const message = error instanceof Error ? error.message : String(error);
  return { exitCode: EXIT.failure, text: `mediagate: ${message}`, json: { kind: 'error', message } };
}

function wantsJson(args: readonly unknown[]): boolean {
  const command = args.at(-1);
  return command instanceof Command && command.opts()['json'] === true;
}

/**
 * Wraps a command's action: an error is printed (code, param, message) and becomes the exit
 * code; with --json its summary is also printed on stdout as `{"error": {...}}`.
 */
export function action<A extends unknown[]>(run: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await run(...args);
    } catch (error) {
      const described = describeError(error);
      if (described.text !== '') process.stderr.write(`${described.text}\n`);
      if (wantsJson(args) && described.json) process.stdout.write(`${JSON.stringify({ error: described.json })}\n`);
      process.exitCode = described.exitCode;
    }
  };
}

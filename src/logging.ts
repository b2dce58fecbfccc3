/**
 * The service's logger: pino JSON lines, with what must never be logged taken out before a
 * line is written, whatever code logged it:
 * - API keys: the Authorization header (redacted by path), any `Bearer <token>`, any key of
 *   mediagate's format, and the configured keys themselves, wherever they appear in a string;
 * - media payloads: a data URL is reduced to its MIME type and length;
 * - prompts: `prompt` / `negative_prompt` fields keep a 32-character prefix; every other string
 *   is cut at 512 characters.
 * Request-scoped lines carry `reqId` (Fastify's child logger), the same id as the
 * `x-request-id` response header.
 *
 * Guarded by test/logging.test.ts.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { prettyDestination, prettyLine } from './logging-pretty.js';
import { traceLogFields } from './tracing/index.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface LoggerOptions {
  readonly level: LogLevel;
  /** Strings to take out of every line (the configured API keys). */
  readonly secrets?: readonly string[];
  /** Where lines go; default stdout. Tests pass a stream and read it. */
  readonly destination?: DestinationStream;
  /** `json` (one object a line), `pretty` (for a person), `auto`: pretty when stdout is a terminal. Default auto. */
  readonly format?: 'json' | 'pretty' | 'auto';
}

/**
 * Standard output, written synchronously. pino's default destination writes asynchronously and,
 * at `process.exit`, flushes what is pending in a loop that retries every 100 ms whatever the
 * error: once the reader of a pipe is gone (`npm start | tee log`, then Ctrl-C) every retry is
 * EPIPE and the process never exits. A synchronous write fails at once instead, pino then stops
 * writing to that stream, and nothing is left pending at exit (nor lost: the last line before an
 * exit is written before it).
 */
function stdoutDestination(): DestinationStream {
  return pino.destination({ dest: 1, sync: true });
}

function destinationFor(options: LoggerOptions): DestinationStream {
  const format = options.format ?? 'auto';
  const pretty = format === 'pretty' || (format === 'auto' && options.destination === undefined && process.stdout.isTTY === true);
  if (!pretty) return options.destination ?? stdoutDestination();
  if (options.destination === undefined) return prettyDestination();
  const inner = options.destination;
  return { write: (line: string) => inner.write(prettyLine(line)) };
}

const PROMPT_PREFIX = 32;
const MAX_STRING = 512;
const MAX_DEPTH = 4;
const PROMPT_FIELDS = new Set(['prompt', 'negative_prompt']);

const DATA_URL = /data:([\w.+/-]{0,100});base64,[A-Za-z0-9+/=_-]{8,}/g;
const BEARER = /\b(bearer\s+)[^\s"',;]+/gi;
const MEDIAGATE_KEY = /\bmg_[0-9A-Za-z]{36}\b/g;

/** Returns a function that scrubs one string (secrets, payloads, length). */
export function createScrubber(secrets: readonly string[] = []): (text: string) => string {
  const known = secrets.filter((secret) => secret.length > 0);
  return (text) => {
    let out = text;
    if (out.includes('data:')) out = out.replace(DATA_URL, (match, mime: string) => `data:${mime};base64,[${match.length} chars]`);
    if (/bearer/i.test(out)) out = out.replace(BEARER, '$1[redacted]');
    if (out.includes('mg_')) out = out.replace(MEDIAGATE_KEY, 'mg_[redacted]');
    for (const secret of known) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
    return out.length > MAX_STRING ? `${out.slice(0, MAX_STRING)}...[${out.length - MAX_STRING} more chars]` : out;
  };
}

function scrubValue(value: unknown, scrub: (text: string) => string, depth: number, field: string): unknown {
  if (typeof value === 'string') {
    if (PROMPT_FIELDS.has(field) && value.length > PROMPT_PREFIX) return `${scrub(value.slice(0, PROMPT_PREFIX))}...[${value.length} chars]`;
    return scrub(value);
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[object]';
  if (Array.isArray(value)) return value.slice(0, 50).map((item) => scrubValue(item, scrub, depth + 1, field));
  if (value instanceof Error) return scrubError(value, scrub, depth);
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) out[key] = scrubValue(inner, scrub, depth + 1, key);
  return out;
}

function scrubError(error: Error, scrub: (text: string) => string, depth: number): unknown {
  const serialized = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(serialized)) {
    // A stack keeps its frames (they are ours) but loses any payload in its first line.
    out[key] = key === 'stack' && typeof value === 'string' ? value.split('\n').map(scrub).join('\n') : scrubValue(value, scrub, depth + 1, key);
  }
  return out;
}

export function createLogger(options: LoggerOptions): Logger {
  const scrub = createScrubber(options.secrets);
  return pino(
    {
      level: options.level,
      // With a trace active (tracing/), each line says which: `trace_id` and `span_id`.
      // A new object each time: pino merges the line's fields into what the mixin returns.
      mixin: () => traceLogFields() ?? {},
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', '*.headers.authorization', 'authorization', 'apiKey', '*.apiKey'],
        censor: '[redacted]',
      },
      serializers: {
        err: (error: unknown) => (error instanceof Error ? scrubError(error, scrub, 0) : scrubValue(error, scrub, 0, 'err')),
      },
      formatters: {
        log: (object) => scrubValue(object, scrub, 0, '') as Record<string, unknown>,
      },
      hooks: {
        // The message string too (pino's interpolation arguments included).
        logMethod(args, method) {
          const cleaned = args.map((arg: unknown) => (typeof arg === 'string' ? scrub(arg) : arg));
          method.apply(this, cleaned as Parameters<typeof method>);
        },
      },
    },
    destinationFor(options),
  );
}

/**
 * An error to log for a request whose body may hold prompts: any prompt of the body quoted in
 * the error's message or stack is cut to its prefix. Other fields of the error are dropped.
 */
export function withoutPrompts(error: unknown, body: unknown): unknown {
  if (!(error instanceof Error) || body === null || typeof body !== 'object') return error;
  const record = body as Record<string, unknown>;
  const prompts = [...PROMPT_FIELDS]
    .map((field) => record[field])
    .filter((value): value is string => typeof value === 'string' && value.length > PROMPT_PREFIX);
  if (prompts.length === 0) return error;
  const cut = (text: string | undefined): string | undefined => {
    if (text === undefined) return undefined;
    let out = text;
    for (const prompt of prompts) if (out.includes(prompt)) out = out.split(prompt).join(`${prompt.slice(0, PROMPT_PREFIX)}...[prompt]`);
    return out;
  };
  return { type: error.name, message: cut(error.message), stack: cut(error.stack) };
}

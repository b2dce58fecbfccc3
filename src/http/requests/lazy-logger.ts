import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LogFn } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

function forward(level: Level): LogFn {
  return function (this: LazyChildLogger, ...args: unknown[]): void {
    const real = this.real();
    Reflect.apply(real[level], real, args);
  };
}

/**
 * A request's child logger, made on its first line. Fastify gives every request a child of
 * the app's logger (so each line carries the request id), and pino builds a child with its
 * bindings and redaction on the spot: ~1.3 µs a request, 3% of a create (`npm run bench --
 * --profile`), for requests that, below debug level, almost never log.
 */
export class LazyChildLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  real(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  fatal = forward('fatal');
  error = forward('error');
  warn = forward('warn');
  info = forward('info');
  debug = forward('debug');
  trace = forward('trace');
  silent = forward('silent');

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }
}

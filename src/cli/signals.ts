import type { MediagateProcess } from '../service-factory.js';

/**
 * SIGTERM/SIGINT: stop taking requests and tasks, give running renders `drainMs` to finish,
 * hand the rest back to the queue, then exit 0. A second signal exits at once.
 */
export function closeOnSignals(app: MediagateProcess, drainMs: number): void {
  let closing = false;
  const stop = (signal: string): void => {
    if (closing) {
      app.logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    closing = true;
    app.logger.info({ signal, drainMs }, 'shutting down: draining running tasks');
    app.close(drainMs).then(
      () => process.exit(0),
      (error: unknown) => {
        app.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

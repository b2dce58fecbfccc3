import { stopTracing } from '../tracing/index.js';
import type { MediagateProcess } from '../service-factory.js';

/**
 * A repeat within this window is the same stop, not an operator insisting: Ctrl-C under
 * `npm start` reaches the server twice (from the terminal, and forwarded by npm).
 */
const SAME_STOP_MS = 1000;

/**
 * SIGTERM/SIGINT: stop taking requests and tasks, give running renders `drainMs` to finish,
 * hand the rest back to the queue, log "mediagate stopped", then exit 0. A second signal
 * (a second or more after the first) exits at once with 1.
 */
export function closeOnSignals(app: MediagateProcess, drainMs: number): void {
  let closingSince: number | undefined;
  const stop = (signal: string): void => {
    if (closingSince !== undefined) {
      if (Date.now() - closingSince < SAME_STOP_MS) return;
      app.logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    closingSince = Date.now();
    app.logger.info({ signal, drainMs }, 'shutting down: draining running tasks');
    app
      .close(drainMs)
      // The spans still queued are sent before the exit.
      .then(() => stopTracing().catch(() => {}))
      .then(
        () => {
          app.logger.info({ signal, durationMs: Date.now() - (closingSince ?? 0) }, 'mediagate stopped');
          process.exit(0);
        },
        (error: unknown) => {
          app.logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

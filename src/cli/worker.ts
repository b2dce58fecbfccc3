import { createMediagateWorker } from '../service-factory.js';
import { fail, readChannels, readConfig, readModels, readPricing, startTraces } from './serve.js';
import { closeOnSignals } from './signals.js';
import { loadedSummary } from './startup.js';

/**
 * `mediagate worker`: renders tasks, serves no HTTP. Run any number of them beside
 * `mediagate serve --no-workers` processes on one PostgreSQL (DATABASE_URL) and one shared
 * MEDIAGATE_DATA_DIR. SIGTERM drains: no new task is taken, running ones get MEDIAGATE_DRAIN_S
 * to finish, the rest go back to the queue.
 */
export async function worker(): Promise<void> {
  const config = readConfig({ workers: true });
  const models = readModels(config);
  const channels = readChannels(config);
  const pricing = readPricing(config);
  if (!config.databaseUrl) {
    process.stderr.write(
      'mediagate: warning: `mediagate worker` without DATABASE_URL shares the SQLite file in MEDIAGATE_DATA_DIR; ' +
        'separate worker processes are meant for PostgreSQL (see docs/operations/scaling-out.md).\n',
    );
  }
  await startTraces('worker');
  const app = await createMediagateWorker(config, { channels, models, ...(pricing === undefined ? {} : { pricing }) }).catch(fail);
  if (app.generatedKey) {
    // Only when no key was configured and the database has none: the first process creates one.
    process.stdout.write(`\nNo API key was configured, so one was created. It is shown only this once; keep it:\n\n  ${app.generatedKey}\n\n`);
  }
  await app.start();
  app.logger.info(
    {
      workers: config.concurrency,
      ...loadedSummary(config, channels, pricing),
      ...(app.metricsUrl === undefined ? {} : { metrics: app.metricsUrl }),
    },
    'mediagate worker started',
  );
  // The process lives until a signal stops it (closeOnSignals exits). Its loops' timers do not
  // hold the event loop (they must not keep a closing server alive), and on SQLite nothing else
  // does: without this a worker with nothing to do at start exited at once.
  setInterval(() => undefined, 2 ** 30);
  closeOnSignals(app, config.drainMs);
}

import { ConfigError, loadConfig, type Config } from '../config.js';
import { createMediagate } from '../service-factory.js';
import { closeOnSignals } from './signals.js';

export interface ServeOptions {
  readonly workers: boolean;
  readonly http: boolean;
}

function fail(error: unknown): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`mediagate: configuration error: ${error.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  throw error;
}

export function readConfig(overrides: Partial<Config> = {}): Config {
  try {
    return loadConfig(process.env, overrides);
  } catch (error) {
    return fail(error);
  }
}

/** `mediagate serve`: API and workers in one process (the default), or API only. */
export async function serve(options: ServeOptions): Promise<void> {
  const config = readConfig({ workers: options.workers });
  const app = await createMediagate(config);
  if (app.generatedKey) {
    process.stdout.write(
      `\nNo API key was configured, so one was created. It is shown only this once; keep it:\n\n  ${app.generatedKey}\n\n` +
        `Use it as: Authorization: Bearer ${app.generatedKey}\n\n`,
    );
  }
  const { url } = await app.start();
  app.logger.info(
    { url, workers: config.workers ? config.concurrency : 0, dataDir: config.dataDir, engine: config.engine, store: config.databaseUrl ? 'postgres' : 'sqlite' },
    'mediagate listening',
  );
  closeOnSignals(app, config.drainMs);
}

import { startTracing } from '../tracing/index.js';
import { ChannelsConfigError, loadChannelsConfig, type ChannelsConfig } from '../channels/config.js';
import { loadPricing, PricingConfigError, type Pricing } from '../billing/index.js';
import { MODELS, ModelsConfigError, declareModels, loadModelsFile, type ModelRow } from '../catalog/index.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { createMediagate } from '../service-factory.js';
import { describeListenError, portProblem } from './port-check.js';
import { closeOnSignals } from './signals.js';
import { loadedSummary } from './startup.js';

export interface ServeOptions {
  /** `--no-workers` given: false. Absent: MEDIAGATE_WORKERS decides (default true). */
  readonly workers?: boolean;
}

export function fail(error: unknown): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`mediagate: configuration error: ${error.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  if (error instanceof ChannelsConfigError) {
    // One line per fault, each naming the JSON path at fault (docs/guides/channels.md#configuration).
    process.stderr.write(`mediagate: configuration error: MEDIAGATE_CHANNELS_FILE is invalid:\n${error.faults.map((f) => `  ${f}\n`).join('')}`);
    process.exit(error.exitCode);
  }
  if (error instanceof ModelsConfigError) {
    process.stderr.write(`mediagate: configuration error: MEDIAGATE_MODELS_FILE is invalid:\n${error.faults.map((f) => `  ${f}\n`).join('')}`);
    process.exit(error.exitCode);
  }
  if (error instanceof PricingConfigError) {
    process.stderr.write(`mediagate: configuration error: MEDIAGATE_PRICING_FILE is invalid:\n${error.faults.map((f) => `  ${f}\n`).join('')}`);
    process.exit(error.exitCode);
  }
  throw error;
}

function exitWith(line: string): never {
  process.stderr.write(`mediagate: ${line}\n`);
  process.exit(1);
}

/** Traces, when OpenTelemetry's variables ask for them (tracing/); a value it cannot honour exits 78. */
export async function startTraces(role: 'api' | 'worker'): Promise<void> {
  try {
    await startTracing(process.env, role);
  } catch (error) {
    process.stderr.write(`mediagate: configuration error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(78); // EX_CONFIG
  }
}

export function readConfig(overrides: Partial<Config> = {}): Config {
  try {
    return loadConfig(process.env, overrides);
  } catch (error) {
    return fail(error);
  }
}

let declared: { readonly path: string | undefined; readonly rows: readonly ModelRow[] } | undefined;

/**
 * The declared models (`path`, default MEDIAGATE_MODELS_FILE), read once and checked whole; a
 * fault exits 78. They join the catalog at once: the channels and pricing files read after
 * them may name their ids.
 */
export function readModels(config: Config, path: string | undefined = config.modelsFile): readonly ModelRow[] {
  if (declared !== undefined && declared.path === path) return declared.rows;
  try {
    const rows = loadModelsFile(path, MODELS);
    declareModels(rows);
    declared = { path, rows };
    return rows;
  } catch (error) {
    return fail(error);
  }
}

/** The channels file the config names, read once with the same environment; a fault exits 78. */
export function readChannels(config: Config): ChannelsConfig {
  readModels(config);
  try {
    return loadChannelsConfig(config.channelsFile, process.env);
  } catch (error) {
    return fail(error);
  }
}

/** The pricing file the config names (or `path`), read once and checked whole; a fault exits 78. */
export function readPricing(config: Config, path: string | undefined = config.pricingFile): Pricing | undefined {
  readModels(config);
  try {
    return loadPricing(path);
  } catch (error) {
    return fail(error);
  }
}

/** `mediagate serve`: API and workers in one process (the default), or API only. */
export async function serve(options: ServeOptions): Promise<void> {
  const config = readConfig(options.workers === undefined ? {} : { workers: options.workers });
  const models = readModels(config);
  const channels = readChannels(config);
  const pricing = readPricing(config);
  const problem = await portProblem(config.host, config.port);
  if (problem) exitWith(problem);
  await startTraces('api');
  // A fault found while opening (the S3 bucket missing, its credentials refused) exits 78 too.
  const app = await createMediagate(config, { channels, models, ...(pricing === undefined ? {} : { pricing }) }).catch(fail);
  if (app.generatedKey) {
    process.stdout.write(
      `\nNo API key was configured, so one was created. It is shown only this once; keep it:\n\n  ${app.generatedKey}\n\n` +
        `Use it as: Authorization: Bearer ${app.generatedKey}\n\n`,
    );
  }
  let url: string;
  try {
    ({ url } = await app.start());
  } catch (error) {
    // Taken between the check and the listen: still one line, not a stack trace.
    const line = error instanceof Error ? describeListenError(error, config.host, config.port) : undefined;
    if (!line) throw error;
    await app.close(0).catch(() => {});
    exitWith(line);
  }
  app.logger.info({ url, workers: config.workers ? config.concurrency : 0, ...loadedSummary(config, channels, pricing) }, 'mediagate listening');
  if (!config.publicUrlExplicit && (config.host === '0.0.0.0' || config.host === '::')) {
    app.logger.warn(
      { host: config.host, publicUrl: config.publicUrl },
      'output URLs point at 127.0.0.1, which other machines cannot reach: set MEDIAGATE_PUBLIC_URL to the address clients use',
    );
  }
  closeOnSignals(app, config.drainMs);
}

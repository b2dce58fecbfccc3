/**
 * `mediagate`: the server, to embed in a Node.js process. The client SDK is `mediagate/client`.
 *
 * ```ts
 * import { createMediagate, loadConfig } from 'mediagate';
 * const app = await createMediagate(loadConfig(process.env));
 * const { url } = await app.start();
 * ```
 */
export { createMediagate, createMediagateWorker, type Mediagate, type MediagateOptions, type MediagateWorker } from './service-factory.js';
export { loadConfig, ConfigError, type Config } from './config.js';

import { join } from 'node:path';
import { FILE_ROUTES } from '../http/routes.js';
import { signingRefreshLoop } from '../storage/signing.js';
import { sweepTurn } from '../storage/sweep-turn.js';
import { sweeperLoop } from '../storage/sweeper.js';
import { fieldsOf } from '../config-fields.js';
import type { Floors } from './floors.js';
import { FILES_SLICE } from './slices/files.js';
import type { ConfigSlice, Module } from './module.js';

/** Its own settings (slices/files.ts) and the shared ones it reads. */
const CONFIG = [...fieldsOf(FILES_SLICE), 'outputTtlMs', 'renderTimeoutMs', 'leaseMs', 'dataDir', 'sweepIntervalMs', 'storage'] as const;
type FilesConfig = ConfigSlice<(typeof CONFIG)[number]>;

/**
 * Files, the console and the docs: the signed output and input bytes, the API's description and
 * the web console; the refresh of the URL signing secrets (a rotation by `mediagate secrets
 * rotate` reaches this process at the next read, never per request); the sweeper of expired
 * outputs, render-cache entries as old, and scratch left by dead attempts.
 */
export function filesModule(floors: Floors): Module {
  const config: FilesConfig = floors.config;
  const { signer, store, storage, workRoot, logger } = floors;
  const refresh = signingRefreshLoop(signer, store, config.signingRefreshMs, (error) =>
    logger.warn({ err: error }, 'reading the URL signing secrets failed; keeping the current ones'),
  );
  const sweeper = sweeperLoop({
    storage,
    outputTtlMs: config.outputTtlMs,
    workRoot,
    // A scratch directory outlives its attempt by at most a render and a lost lease.
    workDirMaxAgeMs: config.renderTimeoutMs + config.leaseMs * 2,
    renderCacheRoot: join(config.dataDir, 'render-cache'),
    intervalMs: config.sweepIntervalMs,
    log: logger,
    // One process lists a shared bucket per interval (its listings are paid requests).
    ...(config.storage.kind === 's3' ? { listingTurn: sweepTurn(store, 'outputs', config.sweepIntervalMs) } : {}),
  });
  return { name: 'files', config: CONFIG, routes: FILE_ROUTES, loops: [refresh, sweeper] };
}

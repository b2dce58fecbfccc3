import { createValidator, type ModelRow, type Validator } from '../catalog/index.js';
import { SANDBOX_CHANNEL, routedModels, type ChannelsConfig } from '../channels/config.js';
import { validationError } from '../errors.js';
import { createScrubber } from '../logging.js';
import { inputKey, publishingTask, type InputStore } from '../storage/inputs.js';
import type { UrlSigner } from '../storage/signing.js';
import type { TaskService } from '../tasks/service.js';
import type { UpstreamScheduler } from '../tasks/upstream/scheduler.js';
import type { Floors } from './floors.js';
import type { ConfigSlice, Module } from './module.js';

const CONFIG = ['workers', 'publicUrl', 'publicUrlExplicit', 'fetchAllowHosts', 'fetchAllowPrivate'] as const;
type ChannelsModuleConfig = ConfigSlice<(typeof CONFIG)[number]>;

/**
 * Channels (docs/channels.md): the models the routing table offers and the check of a create
 * against its route's first target, and, when some route leads off the sandbox, the upstream
 * side: the cancel of a cancelled task's upstream job (every process, API-only ones included:
 * the one that wins a cancel sends it) and, with workers, the scheduler.
 */
export interface ChannelsModule extends Module {
  /** The catalog rows this deployment routes. */
  readonly models: readonly ModelRow[];
  /** Built on first call: a worker-only process validates nothing and compiles no schema. */
  readonly validator: () => Promise<Validator>;
  readonly scheduler: UpstreamScheduler | undefined;
}

/** How long a published input's URL is valid: an upstream fetches it when the job is submitted. */
const PUBLISHED_INPUT_TTL_S = 3600;

/**
 * ChannelMedia.publish: a data-URL input an upstream must fetch by URL is stored under the
 * inputs folder and served at `<MEDIAGATE_PUBLIC_URL>/inputs/...`, signed and expiring
 * (http/routes/files.ts getInput). Without a public URL, upstreams get data URLs inline.
 */
function publisher(publicUrl: string, inputs: InputStore, signer: UrlSigner, service: TaskService): (bytes: Buffer, mime: string) => Promise<string> {
  return async (bytes, mime) => {
    const taskId = publishingTask.getStore();
    // Counted against the key's input bytes before it is written (TaskService.countPublishedInput).
    if (taskId !== undefined) await service.countPublishedInput(taskId, bytes.length);
    const { folder, name } = await inputs.publish(bytes, mime, taskId);
    const exp = Math.floor(Date.now() / 1000) + PUBLISHED_INPUT_TTL_S;
    const key = inputKey(folder, name);
    return `${publicUrl.replace(/\/$/, '')}/${key}?exp=${exp}&sig=${signer.sign(key, exp)}`;
  };
}

/** Whether any route leads off the sandbox (then the upstream side of the process is built). */
function routesUpstream(channels: ChannelsConfig): boolean {
  return [...channels.channels.values()].some((channel) => channel.protocol !== 'sandbox');
}

/**
 * The catalog's validator, and, when some route leads off the sandbox, the check of the route's
 * first target after it (docs/channels.md "Target profiles"): a parameter that target cannot
 * express is the same 400 `unsupported_value` as the catalog's own, before the task exists.
 */
async function routeValidator(models: readonly ModelRow[], channels: ChannelsConfig, now: (() => number) | undefined): Promise<Validator> {
  const validator = createValidator(models, now === undefined ? {} : { now });
  if (!routesUpstream(channels)) return validator;
  const [{ createTargetCheck }, { ADAPTERS }] = await Promise.all([import('../channels/targets.js'), import('../channels/protocols/index.js')]);
  const check = createTargetCheck(channels, ADAPTERS);
  return {
    validate(kind, input) {
      const result = validator.validate(kind, input);
      if (!result.ok) return result;
      const problem = check(result.row.id, kind, result.params);
      return problem === undefined ? result : { ok: false, error: validationError('unsupported_value', problem.param, problem.message) };
    },
  };
}

/** The upstream side; loaded on demand: a deployment without channels never loads the adapters. */
async function createUpstream(config: ChannelsModuleConfig, floors: Floors) {
  const { options, channels, service, storage, inputs, signer, workRoot, logger, channelMetrics: metrics } = floors;
  const [{ UpstreamScheduler }, { UpstreamCanceller }, { createChannelContexts }, { createChannelMedia }, { ADAPTERS }] = await Promise.all([
    import('../tasks/upstream/scheduler.js'),
    import('../tasks/upstream/cancel.js'),
    import('../channels/context.js'),
    import('../channels/media.js'),
    import('../channels/protocols/index.js'),
  ]);
  const log = logger.child({ component: 'upstream' });
  const contexts = createChannelContexts(channels, {
    media: createChannelMedia(config.publicUrlExplicit ? { publish: publisher(config.publicUrl, inputs, signer, service) } : {}),
    log,
    ...(options.upstreamRequestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.upstreamRequestTimeoutMs }),
  });
  const canceller = new UpstreamCanceller({ service, channels, contexts, adapters: ADAPTERS, metrics, log });
  service.on('cancelled', (task) => canceller.onCancelled(task));
  const scheduler = config.workers
    ? new UpstreamScheduler({
        service,
        channels,
        contexts,
        adapters: ADAPTERS,
        storage,
        inputs,
        workRoot,
        fetchAllow: { hosts: config.fetchAllowHosts, private: config.fetchAllowPrivate },
        log,
        metrics,
        canceller,
        scrub: createScrubber([...floors.secrets]),
        ...(options.upstreamTimings === undefined ? {} : { timings: options.upstreamTimings }),
      })
    : undefined;
  return {
    scheduler,
    async close(drainMs: number) {
      await scheduler?.close(drainMs);
      await canceller.close(drainMs);
      await contexts.close();
    },
  };
}

export async function channelsModule(floors: Floors): Promise<ChannelsModule> {
  const config: ChannelsModuleConfig = floors.config;
  const { channels, options, service } = floors;
  const models = routedModels(channels);
  const upstream = routesUpstream(channels) ? await createUpstream(config, floors) : undefined;
  const scheduler = upstream?.scheduler;
  if (scheduler)
    service.on('created', (task) => {
      if (floors.channelOf(task.model) !== SANDBOX_CHANNEL) scheduler.notify();
    });
  return {
    name: 'channels',
    config: CONFIG,
    routes: [],
    loops: [],
    models,
    validator: () => routeValidator(models, channels, options.now),
    scheduler,
    start: () => scheduler?.start(),
    close: async (drainMs) => upstream?.close(drainMs),
  };
}

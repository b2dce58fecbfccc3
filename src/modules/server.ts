import type { FastifyInstance } from 'fastify';
import { DEFAULT_EVENT_STREAM_LIMITS } from '../http/tasks/event-streams.js';
import type { Metrics } from '../http/metrics/metrics.js';
import { KeyLimits } from '../http/keys/rate-limit.js';
import type { Route } from '../http/route.js';
import { buildHttpServer } from '../http/server/server.js';
import type { ChannelsModule } from './channels.js';
import type { Floors } from './floors.js';
import type { WebhooksModule } from './webhooks.js';

/**
 * The HTTP server over the modules' route rows: the context its handlers read, from the floors
 * and from the modules that give the routes something of theirs (the routed models and the
 * create check from channels, the endpoint rules from webhooks, the registry from metrics).
 */
export async function buildServer(
  floors: Floors,
  parts: { readonly routes: readonly Route[]; readonly metrics: Metrics; readonly channels: ChannelsModule; readonly webhooks: WebhooksModule },
): Promise<FastifyInstance> {
  const { config, options, store, service, storage } = floors;
  const { routes, metrics, channels, webhooks } = parts;
  return buildHttpServer(
    {
      models: channels.models,
      ...(options.now === undefined ? {} : { now: options.now }),
      pricing: floors.pricing,
      channelOf: floors.channelOf,
      validator: await channels.validator(),
      service,
      feed: floors.openFeed(),
      sseKeepAliveMs: config.sseKeepAliveMs,
      syncWaitMs: config.syncWaitMs,
      eventStreamLimits: { ...DEFAULT_EVENT_STREAM_LIMITS, maxPerKey: config.sseMaxPerKey, maxLifetimeMs: config.sseMaxLifetimeMs },
      store,
      keys: floors.keys,
      storage,
      inputs: floors.inputs,
      signer: floors.signer,
      metrics,
      publicUrl: floors.publicUrl,
      outputTtlMs: config.outputTtlMs,
      presign: config.outputUrls === 'presigned' ? storage.presigner() : undefined,
      bodyLimitBytes: config.bodyLimitBytes,
      keyLimits: new KeyLimits({
        requestsPerMinute: config.rateLimitPerMin,
        tasksInFlight: config.maxTasksInFlight,
        countActive: (owner, cap) => store.countActiveTasks(owner, cap),
        inputBytesPerKey: config.keyInputBytes,
        activeInputBytes: (owner) => service.activeInputBytes(owner),
      }),
      jsonLimits: { maxDepth: config.jsonMaxDepth, maxItems: config.jsonMaxItems, maxStringBytes: config.jsonMaxStringBytes },
      corsOrigins: config.corsOrigins,
      health: floors.health,
      finalBodyCache: { maxBytes: config.finalBodyCacheBytes, retentionMs: config.taskRetentionMs },
      connectionLimits: {
        headersTimeoutMs: config.headersTimeoutMs,
        requestTimeoutMs: config.requestTimeoutMs,
        maxConnections: config.maxConnections,
        maxHeaderBytes: config.maxHeaderBytes,
      },
      ...(config.metricsToken === undefined ? {} : { metricsToken: config.metricsToken }),
      webhooks: webhooks.routeOptions,
    },
    floors.logger,
    routes,
  );
}

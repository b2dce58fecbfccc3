/**
 * Builds the ChannelContext an adapter gets for one target, from the validated configuration.
 * One HTTP pool per channel, shared by every task on it; the lifecycle creates a ChannelContexts
 * once at start and closes it at shutdown.
 */
import type { Dispatcher } from 'undici';
import type { ChannelConfig, ChannelsConfig, RouteTarget } from './config.js';
import { createGoogleTokenSource, type GoogleTokenSource } from './google-auth.js';
import { createChannelHttp } from './http.js';
import { createKlingTokenSource, type KlingTokenSource } from './kling-auth.js';
import { profileFor } from './profiles.js';
import type { ChannelContext, ChannelHttp, ChannelLog, ChannelMedia, GoogleAccess } from './protocol.js';

export interface ChannelContextsOptions {
  readonly media: ChannelMedia;
  readonly log: ChannelLog;
  readonly now?: () => number;
  /** Per-request timeout of upstream API calls (not output copies). Default 30 s. */
  readonly requestTimeoutMs?: number;
  /** Tests may route every channel through one pool. */
  readonly dispatcher?: Dispatcher;
}

export interface ChannelContexts {
  /** The context for a target; throws for the sandbox (it has no upstream) or an unknown channel. */
  forTarget(target: RouteTarget): ChannelContext;
  close(): Promise<void>;
}

export function createChannelContexts(config: ChannelsConfig, options: ChannelContextsOptions): ChannelContexts {
  const pools = new Map<string, ChannelHttp & { close(): Promise<void> }>();
  const now = options.now ?? Date.now;
  const tokens = new Map<string, GoogleTokenSource>();
  const klingTokens = new Map<string, KlingTokenSource>();

  /** A kling channel's token source: one per channel, so its tasks share one signed token. */
  function kling(channel: ChannelConfig): KlingTokenSource | undefined {
    if (channel.kling === undefined) return undefined;
    let source = klingTokens.get(channel.name);
    if (!source) klingTokens.set(channel.name, (source = createKlingTokenSource(channel.apiKey, channel.kling.secretKey, now)));
    return source;
  }

  /** A vertex channel's access: one token source per channel, shared by all its tasks. */
  function google(channel: ChannelConfig): GoogleAccess | undefined {
    const vertex = channel.vertex;
    if (vertex === undefined) return undefined;
    let source = tokens.get(channel.name);
    if (!source) tokens.set(channel.name, (source = createGoogleTokenSource(vertex.key, { now })));
    const shared = source;
    return { project: vertex.project, location: vertex.location, token: () => shared.token() };
  }

  function pool(channel: ChannelConfig): ChannelHttp {
    let http = pools.get(channel.name);
    if (!http) {
      http = createChannelHttp({
        baseUrl: channel.baseUrl,
        timeoutMs: options.requestTimeoutMs ?? 30_000,
        ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
      });
      pools.set(channel.name, http);
    }
    return http;
  }

  return {
    forTarget(target) {
      const channel = config.channels.get(target.channel);
      if (!channel) throw new Error(`no channel '${target.channel}'`);
      if (channel.protocol === 'sandbox') throw new Error(`channel '${target.channel}' is the sandbox; it has no upstream context`);
      return {
        channel: channel.name,
        baseUrl: channel.baseUrl,
        apiKey: channel.apiKey,
        upstreamModel: target.upstreamModel,
        profile: profileFor(channel.protocol, target.upstreamModel, target.profile),
        http: pool(channel),
        media: options.media,
        log: options.log,
        now,
        google: google(channel),
        kling: kling(channel),
      };
    },
    async close() {
      await Promise.all([...pools.values()].map((http) => http.close()));
      await Promise.all([...tokens.values()].map((source) => source.close()));
      pools.clear();
      tokens.clear();
      klingTokens.clear();
    },
  };
}

import { priceList, type Pricing } from '../billing/index.js';
import { SANDBOX_CHANNEL, type ChannelsConfig } from '../channels/config.js';
import type { Config } from '../config.js';

/**
 * What a process loaded, for its start-up line ("mediagate listening", "mediagate worker
 * started"): an operator reads there which channels file, channels and pricing file are in
 * force, without asking the running service. Names and counts only: no key, no URL with a secret.
 */
export function loadedSummary(config: Config, channels: ChannelsConfig, pricing: Pricing | undefined): Record<string, unknown> {
  const upstream = [...channels.channels.values()]
    .filter((channel) => channel.name !== SANDBOX_CHANNEL)
    .map((channel) => `${channel.name}:${channel.protocol}`);
  const priced = pricing === undefined ? 0 : priceList(pricing).filter((listing) => listing.from !== 'none').length;
  return {
    engine: config.engine,
    store: config.databaseUrl ? 'postgres' : 'sqlite',
    dataDir: config.dataDir,
    media: config.storage.kind === 's3' ? `s3://${config.storage.bucket}/${config.storage.prefix}` : 'dataDir',
    outputUrls: config.outputUrls,
    channelsFile: config.channelsFile ?? null,
    channels: upstream,
    routedModels: channels.routes.size,
    pricingFile: config.pricingFile ?? null,
    ...(pricing === undefined ? {} : { currency: pricing.currency, pricedModels: priced }),
    // How many, never which: the keys themselves are secrets.
    adminKeys: config.adminKeys.length,
  };
}

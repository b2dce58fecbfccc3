import type { ChannelConfig, ChannelsConfig } from '../channels/config.js';
import { createChannelContexts } from '../channels/context.js';
import { createChannelMedia } from '../channels/media.js';
import { ADAPTERS } from '../channels/protocols/index.js';
import type { ProbeOutcome } from '../channels/protocol.js';
import { compareWithSchema } from '../channels/schema-probe.js';
import { parseGenericModel } from '../channels/protocols/generic-input.js';
import { formatTable } from './keys.js';
import { readChannels, readConfig } from './serve.js';

export interface ChannelsCheckOptions {
  readonly probe: boolean;
}

/** Probes answer within this; a hung upstream is a failure line, not a hung command. */
const PROBE_TIMEOUT_MS = 10_000;

const perSecond = (n: number): string => (Number.isFinite(n) ? String(n) : '-');

function channelRows(config: ChannelsConfig): string[][] {
  const rows = [['CHANNEL', 'PROTOCOL', 'BASE URL', 'KEY FROM', 'MAX IN FLIGHT', 'SUBMIT/S', 'POLL/S', 'TIMEOUT S']];
  for (const c of config.channels.values()) {
    if (c.protocol === 'sandbox') continue;
    rows.push([
      c.name,
      c.protocol,
      c.baseUrl,
      c.apiKeyEnv || (c.vertex?.credentialsFileEnv ?? ''),
      String(c.maxInFlight),
      perSecond(c.submitPerS),
      perSecond(c.pollPerS),
      String(c.timeoutS),
    ]);
  }
  return rows;
}

function routeRows(config: ChannelsConfig): string[][] {
  const rows = [['MODEL', 'TARGETS (in order)']];
  for (const [model, targets] of config.routes) {
    rows.push([model, targets.map((t) => (t.upstreamModel === model ? t.channel : `${t.channel} (${t.upstreamModel})`)).join(' -> ')]);
  }
  return rows;
}

/** The upstream model a probe names: the channel's first route target's, else none. */
function probeModel(config: ChannelsConfig, channel: string): string {
  for (const targets of config.routes.values()) {
    const target = targets.find((t) => t.channel === channel);
    if (target) return target.upstreamModel;
  }
  return '';
}

async function probeOne(config: ChannelsConfig, channel: ChannelConfig): Promise<ProbeOutcome & { ms: number }> {
  const adapter = ADAPTERS[channel.protocol];
  const started = Date.now();
  if (!adapter) return { ok: false, reason: `no adapter for protocol ${channel.protocol}`, ms: 0 };
  const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined };
  const contexts = createChannelContexts(config, { media: createChannelMedia(), log: quiet, requestTimeoutMs: PROBE_TIMEOUT_MS });
  try {
    const ctx = contexts.forTarget({ channel: channel.name, upstreamModel: probeModel(config, channel.name) });
    const outcome = await adapter.probe(ctx);
    return { ...outcome, ms: Date.now() - started };
  } catch (error) {
    // An adapter never throws for what the network does; a throw is a bug, still one line here.
    return { ok: false, reason: error instanceof Error ? error.message : String(error), ms: Date.now() - started };
  } finally {
    await contexts.close();
  }
}

/**
 * `mediagate channels check [--probe]`: the channels file and the variables it names are
 * validated exactly as at start (a fault exits 78 with one line per JSON path); then the
 * channels and routes are printed. `--probe` makes one cheap authenticated call per channel;
 * any failure makes the exit code 1. Keys are never printed, only the variables that hold them.
 */
export async function channelsCheck(options: ChannelsCheckOptions): Promise<number> {
  const config = readConfig({ workers: false });
  const channels = readChannels(config);
  const out = (text: string): void => void process.stdout.write(`${text}\n`);
  if (!config.channelsFile) {
    out('MEDIAGATE_CHANNELS_FILE is not set: every model is rendered by the built-in sandbox channel.');
    return 0;
  }
  out(`${config.channelsFile}: valid.\n`);
  const upstreams = [...channels.channels.values()].filter((c) => c.protocol !== 'sandbox');
  if (upstreams.length > 0) out(`${formatTable(channelRows(channels))}\n`);
  out(formatTable(routeRows(channels)));
  const offered = channels.routes.size;
  out(`\n${offered} model(s) routed; models without a route are not offered (absent from GET /v1/models, refused as unsupported_value on model).`);
  if (!options.probe) return 0;

  out('');
  const results = await Promise.all(upstreams.map(async (channel) => ({ channel, result: await probeOne(channels, channel) })));
  const rows = [['CHANNEL', 'PROBE', 'MS', 'DETAIL']];
  for (const { channel, result } of results)
    rows.push([channel.name, result.ok ? 'ok' : 'FAILED', String(result.ms), result.ok ? result.detail : result.reason]);
  out(formatTable(rows));
  const failed = results.filter((r) => !r.result.ok).length;
  const mismatched = await schemaChecks(channels, out);
  if (failed > 0) process.stderr.write(`mediagate: ${failed} of ${results.length} channel probe(s) failed.\n`);
  if (mismatched > 0) process.stderr.write(`mediagate: ${mismatched} route target(s) do not match their model's published input schema.\n`);
  return failed > 0 || mismatched > 0 ? 1 : 0;
}

/**
 * Every route target whose provider publishes the model's input schema (Replicate, fal): the
 * fields the target would send, compared with it. Prints one line per mismatch; returns how
 * many targets have any.
 */
async function schemaChecks(config: ChannelsConfig, out: (text: string) => void): Promise<number> {
  const seen = new Set<string>();
  const rows = [['CHANNEL', 'UPSTREAM MODEL', 'SCHEMA', 'DETAIL']];
  let mismatched = 0;
  const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined };
  const contexts = createChannelContexts(config, { media: createChannelMedia(), log: quiet, requestTimeoutMs: PROBE_TIMEOUT_MS });
  try {
    for (const targets of config.routes.values()) {
      for (const target of targets) {
        const channel = config.channels.get(target.channel);
        const adapter = channel && ADAPTERS[channel.protocol];
        const key = `${target.channel}\u0000${target.upstreamModel}`;
        if (!channel || !adapter?.inputSchema || seen.has(key) || (channel.protocol !== 'fal' && channel.protocol !== 'replicate')) continue;
        seen.add(key);
        const ctx = contexts.forTarget(target);
        // An adapter that throws is one unread row, as a probe that throws is (probeOne).
        const published = await adapter
          .inputSchema(ctx)
          .catch((error: unknown) => ({ ok: false as const, reason: error instanceof Error ? error.message : String(error) }));
        if (!published.ok) {
          rows.push([channel.name, target.upstreamModel, 'unread', published.reason]);
          continue;
        }
        const problems = compareWithSchema(channel.protocol, ctx.profile, parseGenericModel(target.upstreamModel).renames, published.schema);
        if (problems.length === 0) rows.push([channel.name, target.upstreamModel, 'ok', ctx.profile ? 'profile matches' : 'generic mapping matches']);
        else {
          mismatched += 1;
          for (const problem of problems) rows.push([channel.name, target.upstreamModel, 'MISMATCH', problem]);
        }
      }
    }
  } finally {
    await contexts.close();
  }
  if (rows.length > 1) out(`\n${formatTable(rows)}`);
  return mismatched;
}

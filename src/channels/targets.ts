/**
 * The create-time check of a route's first target (docs/channels.md "Target profiles"): a
 * parameter the target cannot express is refused before the task exists, as a 400
 * `unsupported_value` naming it, instead of a task that fails at submit or, worse, an upstream
 * job that quietly ignores it. Pure: no I/O, the adapters' `check` and the target profiles only.
 */
import type { ModelKind, ResolvedParams } from '../catalog/index.js';
import type { ChannelsConfig } from './config.js';
import { profileFor, type ParamProblem } from './profiles.js';
import type { ProtocolAdapter, ProtocolName } from './protocol.js';

export type TargetCheck = (model: string, kind: ModelKind, params: ResolvedParams) => ParamProblem | undefined;

export function createTargetCheck(config: ChannelsConfig, adapters: Partial<Record<ProtocolName, ProtocolAdapter>>): TargetCheck {
  return (model, kind, params) => {
    const target = config.targetsFor(model)[0];
    const channel = target && config.channels.get(target.channel);
    if (!target || !channel || channel.protocol === 'sandbox') return undefined;
    const adapter = adapters[channel.protocol];
    if (!adapter) return undefined;
    return adapter.check(
      { channel: channel.name, upstreamModel: target.upstreamModel, profile: profileFor(channel.protocol, target.upstreamModel, target.profile) },
      kind,
      params,
    );
  };
}

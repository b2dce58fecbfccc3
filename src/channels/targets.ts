/**
 * The create-time check of a route's first target (docs/channels.md "Target profiles"): a
 * parameter the target cannot express is refused before the task exists, as a 400
 * `unsupported_value` naming it, instead of a task that fails at submit or, worse, an upstream
 * job that quietly ignores it. Pure: no I/O, the adapters' `check` and the target profiles only.
 */
import { MEANINGFUL, createValidator, findModel, type ModelKind, type ModelRow, type ResolvedParams } from '../catalog/index.js';
import type { ChannelsConfig } from './config.js';
import { profileFor, type ParamProblem } from './profiles.js';
import type { ProtocolAdapter, ProtocolName } from './protocol.js';

export type TargetCheck = (model: string, kind: ModelKind, params: ResolvedParams) => ParamProblem | undefined;

const DEFAULTS = new Map<string, Readonly<Record<string, unknown>>>();

/**
 * The parameters a request of the row gets from the catalog when it names only what the model
 * requires (prompt, the required inputs): its defaults, as stored on a task.
 */
export function catalogDefaults(row: ModelRow): Readonly<Record<string, unknown>> {
  const known = DEFAULTS.get(row.id);
  if (known) return known;
  if (row.declared) {
    const declared = Object.fromEntries(Object.entries(row.declared).flatMap(([name, spec]) => (spec.default === undefined ? [] : [[name, spec.default]])));
    DEFAULTS.set(row.id, declared);
    return declared;
  }
  const url = 'https://example.com/input.png';
  const body: Record<string, unknown> = { model: row.id, prompt: 'p' };
  if (row.kind === 'video') {
    if (row.required.includes('image')) body['image'] = url;
    if (row.required.includes('images') || row.atLeastOneOf) body['images'] = [url];
    if (row.required.includes('aspect_ratio')) body['aspect_ratio'] = row.aspectRatio?.values[0];
    if (row.imageOptions) body['prompt'] = 'p @image1';
  }
  const validated = createValidator([row]).validate(row.kind, { body, bodyBytes: JSON.stringify(body).length });
  const defaults = validated.ok ? Object.fromEntries(Object.entries(validated.params).filter(([param]) => !(param in body))) : {};
  DEFAULTS.set(row.id, defaults);
  return defaults;
}

/** A refused value that is also the model's default says so: the client never chose it. */
function withDefaultNote(model: string, params: ResolvedParams, problem: ParamProblem): ParamProblem {
  const row = findModel(model);
  if (!row) return problem;
  const defaults = catalogDefaults(row);
  const param = problem.param === 'size' ? 'width' : problem.param;
  if (!(param in defaults) || defaults[param] !== params[param]) return problem;
  if (param === 'width' && defaults['height'] !== params['height']) return problem;
  const shown = param === 'width' ? `${String(defaults['width'])}x${String(defaults['height'])}` : JSON.stringify(defaults[param]);
  return {
    ...problem,
    message: `${problem.message} ${shown} is the default of ${model}: on this route the request must set '${problem.param === 'width' ? 'size' : problem.param}' to a value the target takes.`,
  };
}

/** Protocols whose request carries a declared model's own parameters under their names (docs/channels.md). */
const CARRIES_DECLARED: ReadonlySet<ProtocolName> = new Set<ProtocolName>(['mediagate', 'fal', 'replicate', 'sandbox']);

/**
 * A declared model's own parameter (a name with no meaning here) set on a route whose adapter
 * builds its request from the parameters it knows (DashScope, Ark, MiniMax, PixVerse): refused
 * rather than silently not sent.
 */
function unsendable(model: string, protocol: ProtocolName, params: ResolvedParams): ParamProblem | undefined {
  if (CARRIES_DECLARED.has(protocol)) return undefined;
  const declared = findModel(model)?.declared;
  if (declared === undefined) return undefined;
  for (const [name, spec] of Object.entries(declared)) {
    // Its default is what the upstream does anyway when nothing is sent.
    if (MEANINGFUL[name] !== undefined || params[name] === undefined || params[name] === spec.default) continue;
    return {
      param: name,
      message: `'${name}' cannot be sent to a ${protocol} target: its adapter has no field for it. Leave it unset, or route the model to fal, Replicate or another mediagate.`,
    };
  }
  return undefined;
}

export function createTargetCheck(config: ChannelsConfig, adapters: Partial<Record<ProtocolName, ProtocolAdapter>>): TargetCheck {
  return (model, kind, params) => {
    const target = config.targetsFor(model)[0];
    const channel = target && config.channels.get(target.channel);
    if (!target || !channel || channel.protocol === 'sandbox') return undefined;
    const adapter = adapters[channel.protocol];
    if (!adapter) return undefined;
    const problem = adapter.check(
      { channel: channel.name, upstreamModel: target.upstreamModel, profile: profileFor(channel.protocol, target.upstreamModel, target.profile) },
      kind,
      params,
    );
    return problem ? withDefaultNote(model, params, problem) : unsendable(model, channel.protocol, params);
  };
}

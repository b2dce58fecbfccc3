/**
 * The tables of docs/channels.md that are data here: per protocol, the adapter's `paramMapping`;
 * per built-in profile, what each of our parameters becomes, what is refused, and which catalog
 * defaults the target cannot take. The page holds them between `<!-- generated: KEY -->` and
 * `<!-- /generated -->`; `npx tsx scripts/channel-docs.ts` rewrites them, and
 * test/channel-docs.test.ts fails when the page has fallen behind this file.
 */
import { MODELS, type ModelKind, type ModelRow } from '../catalog/index.js';
import { BUILT_IN, checkProfile, isRefusal, type InputRule, type ParamRefusal, type Scalar, type TargetProfile } from './profiles.js';
import type { ParamMapping, ProtocolAdapter } from './protocol.js';
import { catalogDefaults } from './targets.js';

const show = (value: Scalar): string => JSON.stringify(value);
const code = (text: string): string => `\`${text}\``;

function ruleText(rule: InputRule): string {
  const parts: string[] = [];
  if (rule.map)
    parts.push(
      `mapped ${Object.entries(rule.map)
        .map(([ours, theirs]) => `${ours} -> ${show(theirs)}`)
        .join(', ')}`,
    );
  if (rule.type === 'string' && rule.values) parts.push('sent as a string');
  else if (rule.type) parts.push(`type ${rule.type}`);
  if (rule.values) parts.push(`allowed ${rule.values.map(show).join(', ')}`);
  if (rule.min !== undefined || rule.max !== undefined) parts.push(`range ${rule.min ?? '-inf'} to ${rule.max ?? 'inf'}`);
  if (rule.omit) parts.push(`not sent when ${rule.omit.map(show).join(', ')}`);
  if (rule.note) parts.push(rule.note);
  return parts.join('; ');
}

function refusalText(rule: ParamRefusal): string {
  const accepted = rule.accept && rule.accept.length > 0 ? ` Accepted and not sent: ${rule.accept.map(show).join(', ')}.` : '';
  return `refused: ${rule.refuse}${accepted}`;
}

/**
 * The catalog defaults a target refuses: per parameter and value, the models whose request
 * without that parameter is refused at create (400 `unsupported_value` naming it).
 */
export function refusedDefaults(profile: TargetProfile, kind: ModelKind, rows: readonly ModelRow[] = MODELS): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const row of rows) {
    if (row.kind !== kind) continue;
    const defaults = catalogDefaults(row);
    const sized = typeof defaults['width'] === 'number' && typeof defaults['height'] === 'number';
    for (const [param, value] of Object.entries(defaults)) {
      if (param === 'height' && sized) continue;
      const alone = param === 'width' && sized ? { width: value, height: defaults['height'] } : { [param]: value };
      const problem = checkProfile(profile, kind, alone, 'target');
      if (!problem) continue;
      const shown = param === 'width' && sized ? `size ${String(value)}x${String(defaults['height'])}` : `${param} ${JSON.stringify(value)}`;
      out.set(shown, [...(out.get(shown) ?? []), row.id]);
    }
  }
  return out;
}

/** The section of one built-in profile. */
export function profileSection(profile: TargetProfile): string {
  const kind = profile.kind ?? 'video';
  const lines = [
    `#### ${code(profile.protocol)} ${code(profile.model)} (${profile.closed ? 'closed: only these inputs are sent' : "open: constraints on the adapter's own mapping"})`,
    '',
    `Source: ${profile.source}`,
    '',
    '| Our parameter | Upstream input | Rule |',
    '|---|---|---|',
  ];
  for (const [param, rule] of Object.entries(profile.params))
    lines.push(isRefusal(rule) ? `| ${code(param)} | — | ${refusalText(rule)} |` : `| ${code(param)} | ${code(rule.field)} | ${ruleText(rule)} |`);
  if (profile.sizeToAspectRatio)
    lines.push(
      `| ${code('size')} (${code('width')}, ${code('height')}) | ${code(profile.sizeToAspectRatio.field)} | the nearest of ${profile.sizeToAspectRatio.values.join(', ')} (by the ratio's logarithm); no width or height is sent |`,
    );
  if (profile.pixels || profile.ratio) {
    const rules = [
      profile.pixels ? `${profile.pixels.min} to ${profile.pixels.max} pixels in total` : '',
      profile.ratio ? `ratio ${profile.ratio.min} to ${profile.ratio.max}` : '',
    ].filter(Boolean);
    lines.push(
      `| ${code('size')} (${code('width')}, ${code('height')}) | ${code('parameters.size')} | ${rules.join(', ')}; else refused (param ${code('size')}, or ${code('width')}) |`,
    );
  }
  if (profile.closed) lines.push('| any other | — | refused when set to a value that asks for something (seed -1, an empty list, png, n 1 are not) |');
  const defaults = refusedDefaults(profile, kind);
  lines.push('');
  if (defaults.size === 0) lines.push(`Every ${kind} model's defaults are taken.`);
  else {
    lines.push(`Catalog defaults it cannot take (a request that leaves them out is a 400 \`unsupported_value\` naming the parameter; send a value it takes):`);
    lines.push('');
    for (const [value, models] of defaults) lines.push(`- ${value}: ${models.map(code).join(', ')}`);
  }
  return lines.join('\n');
}

export function builtInProfilesDoc(profiles: readonly TargetProfile[] = BUILT_IN): string {
  return profiles.map(profileSection).join('\n\n');
}

const cell = (text: string): string => (text === '' ? '—' : code(text));

export function paramMappingTable(rows: readonly ParamMapping[]): string {
  return [
    '| Our parameter | Upstream field | Handling | Note |',
    '|---|---|---|---|',
    ...rows.map((row) => `| ${code(row.param)} | ${cell(row.upstream)} | ${row.handling} | ${row.note ?? ''} |`),
  ].join('\n');
}

/** Every generated block of docs/channels.md, by key. */
export function generatedBlocks(adapters: readonly ProtocolAdapter[]): Map<string, string> {
  const blocks = new Map<string, string>([['built-in-profiles', builtInProfilesDoc()]]);
  for (const adapter of adapters) blocks.set(`param-mapping ${adapter.protocol}`, paramMappingTable(adapter.paramMapping));
  return blocks;
}

const BLOCK = /(<!-- generated: ([^>]+?) -->\n)([\s\S]*?)(\n<!-- \/generated -->)/g;

/** The page with every generated block replaced by its current text; unknown keys are reported. */
export function refreshPage(page: string, blocks: ReadonlyMap<string, string>): { page: string; unknown: string[]; seen: string[] } {
  const unknown: string[] = [];
  const seen: string[] = [];
  const out = page.replace(BLOCK, (whole, open: string, key: string, _body: string, close: string) => {
    const text = blocks.get(key);
    if (text === undefined) {
      unknown.push(key);
      return whole;
    }
    seen.push(key);
    return `${open}\n${text}\n${close}`;
  });
  return { page: out, unknown, seen };
}

/**
 * `mediagate channels check --probe`, second half: where the provider publishes a model's input
 * schema (Replicate model versions' OpenAPI `Input`; fal endpoints' OpenAPI), the fields a route
 * target would send are compared with it, and every mismatch is reported: a field the model
 * does not declare (Replicate and fal ignore it: the request is silently not honoured), a type
 * or enum the model does not take (fal's Kling `duration` is the string enum "5"/"10"), a
 * required input nothing maps to.
 */
import type { PublishedInput, PublishedProperty } from './protocol.js';
import type { TargetProfile, ValueType } from './profiles.js';

export type { PublishedInput, PublishedProperty, SchemaOutcome } from './protocol.js';
import { isRefusal } from './profiles.js';
import { genericFields, type GenericHost } from './protocols/generic-input.js';

interface Sent {
  readonly param: string;
  readonly field: string;
  readonly type: ValueType | undefined;
  readonly values?: readonly unknown[];
}

/** What our natural value types are, for a mapping without a profile. */
const NATURAL: Readonly<Record<string, ValueType>> = {
  duration: 'integer',
  seed: 'integer',
  n: 'integer',
  width: 'integer',
  height: 'integer',
  audio_enable: 'boolean',
  prompt_extend: 'boolean',
  prompt: 'string',
  negative_prompt: 'string',
  resolution: 'string',
  aspect_ratio: 'string',
  output_format: 'string',
  image: 'media',
  end_image: 'media',
  audio: 'media',
  images: 'media[]',
  videos: 'media[]',
  audios: 'media[]',
};

/** The fields a target sends, with their types: the profile's, else the generic mapping's. */
function sentFields(host: GenericHost, profile: TargetProfile | undefined, renames: ReadonlyMap<string, string>): Sent[] {
  const out: Sent[] = [];
  if (profile) {
    for (const [param, rule] of Object.entries(profile.params)) {
      if (isRefusal(rule)) continue;
      const values = rule.values ?? (rule.map ? Object.values(rule.map) : undefined);
      out.push({ param, field: renames.get(param) ?? rule.field, type: rule.type, ...(values ? { values } : {}) });
    }
    if (profile.sizeToAspectRatio)
      out.push({ param: 'size', field: profile.sizeToAspectRatio.field, type: 'string', values: profile.sizeToAspectRatio.values });
    for (const [field, value] of Object.entries(profile.fixed ?? {})) out.push({ param: '(fixed)', field, type: undefined, values: [value] });
    return out;
  }
  for (const [param, field] of Object.entries(genericFields(host))) out.push({ param, field: renames.get(param) ?? field, type: NATURAL[param] });
  return out;
}

function jsonType(type: ValueType | undefined, value?: unknown): string | undefined {
  if (value !== undefined) return typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value;
  switch (type) {
    case 'media':
      return 'string';
    case 'media[]':
      return 'array';
    default:
      return type;
  }
}

const compatible = (ours: string | undefined, theirs: string | undefined): boolean =>
  ours === undefined || theirs === undefined || ours === theirs || (ours === 'integer' && theirs === 'number');

/** Every mismatch between what a target sends and the model's published input schema. */
export function compareWithSchema(
  host: GenericHost,
  profile: TargetProfile | undefined,
  renames: ReadonlyMap<string, string>,
  schema: PublishedInput,
): string[] {
  const problems: string[] = [];
  const sent = sentFields(host, profile, renames);
  const topFields = new Set(sent.map((s) => s.field.split('.')[0] ?? s.field));
  for (const item of sent) {
    const top = item.field.split('.')[0] ?? item.field;
    const property = schema.properties[top];
    if (!property) {
      problems.push(`sends '${item.field}' (from ${item.param}), which the model does not declare: it would be ignored`);
      continue;
    }
    if (item.field.includes('.')) continue;
    if (property.enum && property.enum.length > 0) {
      const values = item.values ?? [];
      const outside = values.filter((value) => !property.enum?.includes(value));
      if (outside.length > 0)
        problems.push(`'${item.field}' (from ${item.param}) takes ${JSON.stringify(property.enum)}; the mapping can send ${JSON.stringify(outside)}`);
      else if (values.length === 0) {
        const enumType = jsonType(undefined, property.enum[0]);
        if (!compatible(jsonType(item.type), enumType))
          problems.push(
            `'${item.field}' (from ${item.param}) is the enum ${JSON.stringify(property.enum)}; the mapping sends ${jsonType(item.type) ?? 'a value'} values`,
          );
      }
      continue;
    }
    const ours = item.values && item.values.length > 0 ? jsonType(undefined, item.values[0]) : jsonType(item.type);
    if (!compatible(ours, property.type)) problems.push(`'${item.field}' (from ${item.param}) is ${property.type ?? '?'}; the mapping sends ${ours ?? '?'}`);
  }
  for (const required of schema.required) {
    if (!topFields.has(required)) problems.push(`requires '${required}', which no parameter maps to`);
  }
  return problems;
}

type Json = Record<string, unknown>;
const record = (value: unknown): Json | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined);

/**
 * One property as the probe compares it. The shapes the providers publish:
 * - Replicate (cog): an enum is a named schema behind `allOf: [{$ref}]`, beside `default`,
 *   `x-order` and `description`; an optional input may carry `nullable: true`;
 * - fal: an optional input is `anyOf: [{type: T}, {type: "null"}]`; a choice of shapes is
 *   `anyOf: [{$ref: ImageSize}, {enum: [...], type: "string"}]` (then neither type nor enum is
 *   certain, and the probe checks neither).
 */
function propertyOf(raw: unknown, schemas: Json | undefined, depth = 0): PublishedProperty {
  let property = record(raw) ?? {};
  const ref = property['$ref'];
  if (typeof ref === 'string' && depth < 4) property = { ...propertyOf(schemas?.[ref.split('/').pop() ?? ''], schemas, depth + 1), ...property };
  const allOf = Array.isArray(property['allOf']) ? property['allOf'] : [];
  for (const part of allOf) property = { ...propertyOf(part, schemas, depth + 1), ...property };
  const alternatives = [property['anyOf'], property['oneOf']].flatMap((list): unknown[] => (Array.isArray(list) ? (list as unknown[]) : []));
  const usable = alternatives.map((alt) => propertyOf(alt, schemas, depth + 1)).filter((alt) => alt.type !== 'null');
  if (usable.length === 1 && usable[0]) property = { ...usable[0], ...property };
  const out: { type?: string; enum?: readonly unknown[]; minimum?: number; maximum?: number } = {};
  if (typeof property['type'] === 'string') out.type = property['type'];
  else if (usable.length > 1 && usable.every((alt) => alt.type !== undefined && alt.type === usable[0]?.type)) out.type = usable[0]?.type;
  if (Array.isArray(property['enum'])) out.enum = property['enum'];
  if (typeof property['minimum'] === 'number') out.minimum = property['minimum'];
  if (typeof property['maximum'] === 'number') out.maximum = property['maximum'];
  return out;
}

/** The `Input` schema out of an OpenAPI document (Replicate: components.schemas.Input; fal: the POST body of the endpoint). */
export function inputOf(openapi: unknown, bodyRef?: string): PublishedInput | undefined {
  const schemas = record(record(record(openapi)?.['components'])?.['schemas']);
  const input = record(schemas?.[bodyRef ?? 'Input']);
  if (!input) return undefined;
  const properties: Record<string, PublishedProperty> = {};
  for (const [name, raw] of Object.entries(record(input['properties']) ?? {})) properties[name] = propertyOf(raw, schemas);
  const required = Array.isArray(input['required']) ? input['required'].filter((r): r is string => typeof r === 'string') : [];
  return { properties, required };
}

/**
 * The input schema of one fal endpoint out of the queue OpenAPI document fal serves for it
 * (https://fal.ai/api/openapi/queue/openapi.json?endpoint_id=...): the JSON body of
 * `POST /{endpoint id}` names it (`#/components/schemas/<Name>Input`).
 */
export function falInputOf(openapi: unknown, endpoint: string): PublishedInput | undefined {
  const post = record(record(record(record(openapi)?.['paths'])?.[`/${endpoint}`])?.['post']);
  const body = record(record(record(post?.['requestBody'])?.['content'])?.['application/json']);
  const ref = record(body?.['schema'])?.['$ref'];
  return typeof ref === 'string' ? inputOf(openapi, ref.split('/').pop()) : undefined;
}

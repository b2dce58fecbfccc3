/**
 * The JSON Schemas of the wire shapes are written once, in the words of the OpenAPI document
 * (`const`, `enum`, `oneOf`, formats, descriptions): that is what clients read, and what the
 * SDK's response types are generated from (scripts/generate-client-types.ts). The status
 * routes' serializers (fast-json-stringify, on the poll's hot path) need less, and must not get
 * more: a `oneOf` there would run a validator at every write. `serializerSchema` derives their
 * schema from the same text, keeping only what decides the bytes (types, properties, items).
 */
export type WireSchema = { readonly [keyword: string]: unknown };

function isSchema(value: unknown): value is WireSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string' || typeof value === 'boolean') return typeof value;
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  throw new Error(`a wire schema's const or enum holds ${JSON.stringify(value)}`);
}

/** `type` of a schema as a list (`const` and `enum` give their values' types). */
function typesOf(schema: WireSchema): string[] {
  const type = schema['type'];
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.map(String);
  if ('const' in schema) return [jsonType(schema['const'])];
  const values = schema['enum'];
  if (Array.isArray(values)) return [...new Set(values.map(jsonType))];
  throw new Error(`a wire schema without a type: ${JSON.stringify(schema)}`);
}

/** The schema a serializer compiles: types, object properties and array items only, no `required`. */
export function serializerSchema(schema: WireSchema): WireSchema {
  const oneOf = schema['oneOf'];
  if (Array.isArray(oneOf)) {
    // Only "null or one shape" is written this way in the wire schemas.
    const others = oneOf.filter((branch): branch is WireSchema => isSchema(branch) && branch['type'] !== 'null');
    const [shape] = others;
    if (others.length !== 1 || shape === undefined || others.length === oneOf.length) throw new Error('oneOf in a wire schema is "null or one shape"');
    const inner = serializerSchema(shape);
    return { ...inner, type: [...typesOf(inner), 'null'] };
  }
  const types = typesOf(schema);
  const type = types.length === 1 ? types[0] : types;
  const properties = schema['properties'];
  if (types.includes('object') && isSchema(properties)) {
    return {
      type,
      properties: Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, serializerSchema(isSchema(value) ? value : {})])),
    };
  }
  const items = schema['items'];
  if (types.includes('array') && isSchema(items)) return { type, items: serializerSchema(items) };
  return { type };
}

/** An object schema whose every field is always present (`required` is all of them, in order). */
export function objectSchema(properties: Readonly<Record<string, WireSchema>>, extra: WireSchema = {}): WireSchema {
  return { type: 'object', required: Object.keys(properties), ...extra, properties };
}

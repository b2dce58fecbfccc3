/**
 * An example value for a JSON Schema of the OpenAPI document: what /docs puts in a "try it"
 * form's body so that Send works as it stands. The schema's own `example`, `examples`, `const`,
 * `default` or first `enum` value wins; otherwise a value of the right type is made up (media
 * inputs get a small PNG as a data URL, so the request works offline).
 */

type Schema = Readonly<Record<string, unknown>>;

/**
 * A 64x64 PNG as a data URL: media inputs that work offline (an https:// URL would need the
 * network, and the sandbox engine renders from any decodable image).
 */
export const EXAMPLE_PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAEAAAABACAIAAAAlC+aJAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAn0lEQVRoge2SQQkAQRDDqq+WzmQkrYh7hIFCBKSh6cdpoht0A9ArdhfiLtENugHoFbsLcZfoBt0A9IrdhbhLdINuAHrF7kLcJbpBNwC9Ynch7hLdoBuAXrG7EHeJbtANQK/YXYi7RDfoBqBX7C7EXaIbdAPQK3YX4i7RDboB6BW7C3GX6AbdAPSK3YW4S3SDbgB6xe5C3CW6QTcAveIfHpnLUXgO9etUAAAAAElFTkSuQmCC';

export const EXAMPLE_PROMPT = 'a red fox running through snow';

const isSchema = (value: unknown): value is Schema => value !== null && typeof value === 'object' && !Array.isArray(value);

/** `#/components/schemas/<name>` resolved in `components`; anything else as it is. */
function resolve(schema: Schema, components: Readonly<Record<string, unknown>>): Schema {
  const ref = schema['$ref'];
  if (typeof ref !== 'string') return schema;
  const target = components[ref.replace('#/components/schemas/', '')];
  return isSchema(target) ? target : {};
}

const requiredOf = (schema: Schema): string[] =>
  Array.isArray(schema['required']) ? (schema['required'] as unknown[]).filter((n) => typeof n === 'string') : [];

/** Of several alternatives, the one asking least of the caller (a create's text-to-video model). */
function simplest(options: readonly unknown[], components: Readonly<Record<string, unknown>>): Schema {
  let best: Schema = {};
  let fewest = Infinity;
  for (const option of options) {
    if (!isSchema(option)) continue;
    const schema = resolve(option, components);
    const count = requiredOf(schema).length;
    if (count < fewest) [best, fewest] = [schema, count];
  }
  return best;
}

function firstType(schema: Schema): string | undefined {
  const type = schema['type'];
  if (Array.isArray(type)) return type.find((t): t is string => typeof t === 'string' && t !== 'null');
  return typeof type === 'string' ? type : undefined;
}

function made(schema: Schema, name: string, components: Readonly<Record<string, unknown>>, depth: number): unknown {
  const type = firstType(schema) ?? (isSchema(schema['properties']) ? 'object' : undefined);
  switch (type) {
    case 'object': {
      const properties = isSchema(schema['properties']) ? schema['properties'] : {};
      const required = requiredOf(schema);
      const value: Record<string, unknown> = {};
      for (const key of required) {
        const property = properties[key];
        if (isSchema(property)) value[key] = exampleOf(property, components, key, depth + 1);
      }
      // Nothing required (a PATCH, say): the fields whose schema gives a value, never made-up
      // ones a careless Send would store.
      if (required.length === 0) {
        for (const [key, property] of Object.entries(properties)) {
          const given = isSchema(property) ? givenValue(resolve(property, components)) : undefined;
          if (given !== undefined && given !== null) value[key] = given;
        }
      }
      return value;
    }
    case 'array': {
      const items = isSchema(schema['items']) ? schema['items'] : {};
      const count = typeof schema['minItems'] === 'number' ? Math.max(1, schema['minItems']) : 1;
      return Array.from({ length: count }, () => exampleOf(items, components, name, depth + 1));
    }
    case 'integer':
    case 'number':
      return typeof schema['minimum'] === 'number' ? schema['minimum'] : 1;
    case 'boolean':
      return false;
    case 'string':
      if (schema['format'] === 'media-input') return EXAMPLE_PNG;
      // A reserved name (RFC 2606): it resolves nowhere, so the reader puts their own.
      if (schema['format'] === 'uri') return 'https://receiver.invalid/mediagate';
      if (name === 'prompt') return EXAMPLE_PROMPT;
      return name;
    default:
      return null;
  }
}

/** The value the schema itself gives, if any (undefined: none). */
function givenValue(own: Schema): unknown {
  if ('example' in own) return own['example'];
  if (Array.isArray(own['examples']) && own['examples'].length > 0) return own['examples'][0];
  if ('const' in own) return own['const'];
  if ('default' in own) return own['default'];
  if (Array.isArray(own['enum'])) return (own['enum'] as unknown[]).find((v) => v !== null) ?? null;
  return undefined;
}

/** `name`: the property the schema describes (a prompt gets a sentence, other strings their name). */
export function exampleOf(schema: Schema, components: Readonly<Record<string, unknown>>, name = '', depth = 0): unknown {
  if (depth > 8) return null;
  const own = resolve(schema, components);
  const given = givenValue(own);
  if (given !== undefined) return given;
  for (const key of ['oneOf', 'anyOf'] as const) {
    const options = own[key];
    if (Array.isArray(options)) return exampleOf(simplest(options, components), components, name, depth + 1);
  }
  if (Array.isArray(own['allOf'])) {
    const merged: Record<string, unknown> = {};
    for (const part of own['allOf'] as unknown[]) {
      const value = isSchema(part) ? exampleOf(part, components, name, depth + 1) : undefined;
      if (isSchema(value)) Object.assign(merged, value);
    }
    return merged;
  }
  return made(own, name, components, depth);
}

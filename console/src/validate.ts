/**
 * The server's request validation, in the browser: the same JSON Schema (from GET /v1/models),
 * the same extra rules (from the page's hints) and the same precedence and messages as
 * src/catalog/validate.ts, so a person sees beside the field what the server would answer.
 * Pure (no DOM): test/console-validate.test.ts runs it against the server's validator.
 */

export type Schema = { readonly [key: string]: unknown };

export interface ModelHints {
  readonly atLeastOneOf?: readonly string[];
  readonly maxBodyBytes?: number;
  readonly refNameMaxBytes?: number;
  readonly imageMaxBytes?: number;
  readonly side?: { readonly min: number; readonly max: number };
}

export interface ConsoleHints {
  readonly bodyLimitBytes: number;
  readonly models: Readonly<Record<string, ModelHints>>;
}

export type ValidationCode = 'missing_parameter' | 'invalid_parameter' | 'unsupported_parameter' | 'unsupported_value';

export interface Problem {
  readonly code: ValidationCode;
  readonly param: string;
  readonly message: string;
}

// Decisions §2: body shape, model, unsupported parameters, missing required ones, types, values.
const UNSUPPORTED = 2;
const MISSING = 3;
const TYPE = 4;
const VALUE = 5;

interface Candidate extends Problem {
  readonly rank: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const DATA_PREFIX = /^data:([^;,]*)((?:;[^;,=]+=[^;,]*)*);base64,/i;

/** An absolute https URL with a host, or a decodable Base64 data URL (src/media/data-url.ts). */
export function isMediaString(value: string): boolean {
  if (value.startsWith('data:') || value.startsWith('DATA:')) {
    const match = DATA_PREFIX.exec(value.slice(0, 512));
    if (!match) return false;
    const payload = value.slice(match[0].length);
    return payload.length > 0 && payload.length % 4 !== 1 && BASE64.test(payload);
  }
  if (!/^https:\/\//i.test(value)) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.hostname !== '';
  } catch {
    return false;
  }
}

function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return true;
  }
}

const segment = (key: string | number): string => (typeof key === 'number' ? `[${key}]` : `.${key}`);

/** Checks one value against its schema; `path` is the full path ("images[3]"), `param` the top-level field. */
function check(schema: Schema, value: unknown, path: string, param: string, out: Candidate[]): void {
  const at = (rank: number, code: ValidationCode, message: string): void => void out.push({ rank, code, param, message });
  const type = schema['type'];
  const types = Array.isArray(type) ? (type as string[]) : typeof type === 'string' ? [type] : [];
  if (types.length > 0 && !types.some((t) => typeMatches(t, value))) {
    at(TYPE, 'invalid_parameter', `'${path}' must be ${types.join(',').replace(',', ' or ')}; got ${describeValue(value)}.`);
  }
  if (Array.isArray(schema['enum']) && !(schema['enum'] as unknown[]).some((v) => v === value)) {
    at(VALUE, 'unsupported_value', `'${path}' must be one of ${JSON.stringify(schema['enum'])}; got ${JSON.stringify(value)}.`);
  }
  if (schema['const'] !== undefined && schema['const'] !== value) {
    at(VALUE, 'unsupported_value', `'${path}' must be one of ${JSON.stringify([schema['const']])}; got ${JSON.stringify(value)}.`);
  }
  if (typeof value === 'number') {
    if (typeof schema['maximum'] === 'number' && value > schema['maximum'])
      at(VALUE, 'unsupported_value', `'${path}' must be <= ${schema['maximum']}; got ${value}.`);
    if (typeof schema['minimum'] === 'number' && value < schema['minimum'])
      at(VALUE, 'unsupported_value', `'${path}' must be >= ${schema['minimum']}; got ${value}.`);
  }
  if (typeof value === 'string') {
    if (typeof schema['minLength'] === 'number' && [...value].length < schema['minLength']) at(TYPE, 'invalid_parameter', `'${path}' must not be empty.`);
    if (typeof schema['pattern'] === 'string' && !new RegExp(schema['pattern'], 'u').test(value)) {
      at(
        TYPE,
        'invalid_parameter',
        param === 'prompt'
          ? `'prompt' must not be empty or only whitespace.`
          : `'${path}' is malformed (expected ${param === 'size' ? 'WIDTHxHEIGHT, e.g. 1024x1024' : 'a different form'}).`,
      );
    }
    if (schema['format'] === 'media-input' && !isMediaString(value)) at(TYPE, 'invalid_parameter', `'${path}' must be an https:// URL or a Base64 data URL.`);
    if (typeof schema['maxLength'] === 'number' && [...value].length > schema['maxLength'])
      at(VALUE, 'unsupported_value', `'${path}' must be at most ${schema['maxLength']} characters; got ${[...value].length}.`);
    const urlMax = schema['x-url-max-length'];
    if (typeof urlMax === 'number' && value.length > urlMax && /^https:/i.test(value))
      at(VALUE, 'unsupported_value', `'${path}' is a URL of ${value.length} characters; at most ${urlMax} are allowed.`);
  }
  if (Array.isArray(value)) {
    if (typeof schema['maxItems'] === 'number' && value.length > schema['maxItems'])
      at(VALUE, 'unsupported_value', `'${path}' must hold at most ${schema['maxItems']} items.`);
    if (typeof schema['minItems'] === 'number' && value.length < schema['minItems'])
      at(VALUE, 'unsupported_value', `'${path}' must hold at least ${schema['minItems']} items.`);
    const items = schema['items'];
    if (isObject(items)) value.forEach((item, index) => check(items, item, `${path}${segment(index)}`, param, out));
  }
  if (isObject(value)) checkObject(schema, value, path, param, out);
}

function checkObject(schema: Schema, value: Record<string, unknown>, path: string, param: string | undefined, out: Candidate[]): void {
  const properties = (isObject(schema['properties']) ? schema['properties'] : {}) as Record<string, Schema>;
  const paramOf = (name: string): string => param ?? name;
  for (const name of (schema['required'] as string[] | undefined) ?? []) {
    if (value[name] === undefined)
      out.push({ rank: MISSING, code: 'missing_parameter', param: paramOf(name), message: `Missing required parameter '${name}'.` });
  }
  if (schema['additionalProperties'] === false) {
    for (const name of Object.keys(value)) {
      if (properties[name] !== undefined) continue;
      const where = path === '' ? `'${name}'` : `'${name}' in ${path}`;
      out.push({ rank: UNSUPPORTED, code: 'unsupported_parameter', param: paramOf(name), message: `Parameter ${where} is not supported by this model.` });
    }
  }
  for (const [name, child] of Object.entries(properties)) {
    if (value[name] === undefined) continue;
    check(child, value[name], path === '' ? name : `${path}${segment(name)}`, paramOf(name), out);
  }
}

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).length;
const SIZE = /^([0-9]{1,6})x([0-9]{1,6})$/;

function modelRules(kind: 'video' | 'image', hints: ModelHints, body: Record<string, unknown>, bodyBytes: number): Candidate[] {
  const found: Candidate[] = [];
  if (kind === 'image') {
    if (body['size'] !== undefined && (body['width'] !== undefined || body['height'] !== undefined)) {
      found.push({
        rank: TYPE,
        code: 'invalid_parameter',
        param: 'size',
        message: `'size' cannot be combined with 'width' or 'height'; give one or the other.`,
      });
    }
    const match = typeof body['size'] === 'string' ? SIZE.exec(body['size']) : null;
    if (match && hints.side) {
      const { min, max } = hints.side;
      const [w, h] = [Number(match[1]), Number(match[2])];
      if ([w, h].some((side) => side < min || side > max)) {
        found.push({
          rank: VALUE,
          code: 'unsupported_value',
          param: 'size',
          message: `'size' ${w}x${h} is out of range; each dimension must be ${min}-${max}.`,
        });
      }
    }
    return found;
  }
  if (hints.atLeastOneOf) {
    const names = hints.atLeastOneOf;
    const present = names.filter((name) => body[name] !== undefined);
    const allArrays = present.every((name) => Array.isArray(body[name]));
    const anyItem = present.some((name) => Array.isArray(body[name]) && (body[name] as unknown[]).length > 0);
    if (allArrays && !anyItem) {
      found.push({
        rank: MISSING,
        code: 'missing_parameter',
        param: 'images',
        message: `At least one reference is required: one of ${names.map((n) => `'${n}'`).join(', ')} must hold an item.`,
      });
    }
  }
  if (hints.refNameMaxBytes !== undefined && isObject(body['extra'])) {
    const options = body['extra']['image_options'];
    const limit = hints.refNameMaxBytes;
    if (Array.isArray(options)) {
      const images = body['images'];
      if (Array.isArray(images) && options.length > images.length) {
        found.push({
          rank: TYPE,
          code: 'invalid_parameter',
          param: 'extra',
          message: `'extra.image_options' has ${options.length} items but 'images' has ${images.length}; it is aligned by position with 'images'.`,
        });
      }
      options.forEach((option, index) => {
        const name = isObject(option) ? option['ref_name'] : undefined;
        if (typeof name === 'string' && utf8Bytes(name) > limit) {
          found.push({
            rank: VALUE,
            code: 'unsupported_value',
            param: 'extra',
            message: `'extra.image_options[${index}].ref_name' is ${utf8Bytes(name)} UTF-8 bytes; at most ${limit} are allowed.`,
          });
        }
      });
    }
  }
  if (hints.maxBodyBytes !== undefined && bodyBytes > hints.maxBodyBytes) {
    found.push({
      rank: VALUE,
      code: 'unsupported_value',
      param: 'body',
      message: `The request body is ${bodyBytes} bytes; this model accepts at most ${hints.maxBodyBytes} bytes (20 MB).`,
    });
  }
  return found;
}

/**
 * The one problem the server would report for `body` sent to this model, or undefined.
 * `kind` is the model's family; `bodyBytes` the size of the JSON that will be sent.
 */
export function validateRequest(
  kind: 'video' | 'image',
  schema: Schema,
  hints: ModelHints,
  body: Record<string, unknown>,
  bodyBytes: number,
): Problem | undefined {
  const candidates: Candidate[] = [];
  checkObject(schema, body, '', undefined, candidates);
  candidates.push(...modelRules(kind, hints, body, bodyBytes));
  let best: Candidate | undefined;
  for (const candidate of candidates) if (!best || candidate.rank < best.rank) best = candidate;
  return best ? { code: best.code, param: best.param, message: best.message } : undefined;
}

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { echo, validationError, type ApiError, type ValidationCode } from '../errors.js';
import { checkMediaString, decodeDataUrl, parseDataUrlHeader, type MediaStringCheck } from '../media/data-url.js';
import { checkRule3Image } from '../media/image-header.js';
import { INPUT_LIMITS, MEDIA_FORMAT, URL_MAX_LENGTH_KEYWORD, imageRequestSchema, videoRequestSchema, type JsonSchema } from './schema.js';
import { parseSize } from './declared.js';
import { isRetired, retiredMessage } from './lifecycle.js';
import type { DeclaredParams, ImageModelRow, ModelKind, ModelRow, ResolvedParams, VideoModelRow } from './types.js';

/**
 * Request validation: one Ajv function per model (compiled once, from the row's JSON Schema),
 * plus the few rules a JSON Schema cannot say (byte lengths, cross-field rules, image headers).
 *
 * Every problem found becomes a candidate `{rank, code, param}`; the one reported is the lowest
 * rank, which is the precedence order of decisions §2: body shape, model, unsupported
 * parameters, missing required ones, types, values. Ties keep schema order.
 */

const enum Rank {
  Body = 0,
  Model = 1,
  Unsupported = 2,
  Missing = 3,
  Type = 4,
  Value = 5,
}

interface Candidate {
  readonly rank: Rank;
  readonly code: ValidationCode;
  readonly param: string;
  readonly message: string;
}

export type Validated = { readonly ok: true; readonly row: ModelRow; readonly params: ResolvedParams } | { readonly ok: false; readonly error: ApiError };

export interface RequestInput {
  /** The parsed JSON body, of any shape. */
  readonly body: unknown;
  /** Size of the raw body in bytes (seed rule 2 limits it for one model). */
  readonly bodyBytes: number;
  /**
   * The calling key's models (docs/admin.md), when it is limited to some: another model is
   * refused exactly as a model this deployment does not offer.
   */
  readonly allowsModel?: ((model: string) => boolean) | undefined;
  /**
   * Data URLs of the body already checked by the thread that parsed it (a large body,
   * http/body/body-parser-pool.ts), with its verdicts: not scanned again here, on the event loop.
   */
  readonly checkedMedia?: readonly CheckedMedia[];
}

/** A string of the body and what `checkMediaString` said of it. */
export interface CheckedMedia {
  readonly value: string;
  readonly check: MediaStringCheck;
}

/** The `checkedMedia` of the one validation running (validation is synchronous: nothing interleaves). */
let checkedMedia: readonly CheckedMedia[] = [];

/**
 * checkMediaString, less the scan of a data URL a parser thread already checked. Found by
 * identity: the very string of the body (`===` on the same string does not compare its bytes).
 */
function mediaCheck(value: string): MediaStringCheck {
  for (const checked of checkedMedia) if (checked.value === value) return checked.check;
  return checkMediaString(value);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** A name Ajv puts in an error's params (`additionalProperty`, `missingProperty`): always a string. */
function paramName(error: ErrorObject, key: string): string {
  const value: unknown = (error.params as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : '';
}

/** The top-level body field an Ajv error is about: `images`, not `images/3`. */
function topLevelParam(error: ErrorObject): string {
  const segment = error.instancePath.split('/')[1];
  if (segment !== undefined && segment !== '') return segment.replace(/~1/g, '/').replace(/~0/g, '~');
  if (error.keyword === 'additionalProperties') return paramName(error, 'additionalProperty');
  if (error.keyword === 'required') return paramName(error, 'missingProperty');
  return 'body';
}

function fullPath(error: ErrorObject): string {
  const path = error.instancePath
    .slice(1)
    .split('/')
    .filter(Boolean)
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`));
  return path.join('').replace(/^\./, '');
}

function fromAjv(error: ErrorObject, data: Record<string, unknown>): Candidate {
  const param = topLevelParam(error);
  // Names and paths are the client's own text: repeated cut (errors.ts).
  const path = echo(fullPath(error) || param);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const name = echo(paramName(error, 'additionalProperty'));
      const where = error.instancePath === '' ? `'${name}'` : `'${name}' in ${path}`;
      return { rank: Rank.Unsupported, code: 'unsupported_parameter', param, message: `Parameter ${where} is not supported by this model.` };
    }
    case 'required': {
      const name = echo(paramName(error, 'missingProperty'));
      return { rank: Rank.Missing, code: 'missing_parameter', param, message: `Missing required parameter '${name}'.` };
    }
    case 'type': {
      const value = error.instancePath === '' ? data : lookup(data, error.instancePath);
      return {
        rank: Rank.Type,
        code: 'invalid_parameter',
        param,
        message: `'${path}' must be ${String(params['type']).replace(',', ' or ')}; got ${describeValue(value)}.`,
      };
    }
    case 'format':
      return { rank: Rank.Type, code: 'invalid_parameter', param, message: `'${path}' must be an https:// URL or a Base64 data URL.` };
    case 'pattern':
      return {
        rank: Rank.Type,
        code: 'invalid_parameter',
        param,
        message: param === 'prompt' ? `'prompt' must not be empty or only whitespace.` : `'${path}' is malformed (expected ${describePattern(param)}).`,
      };
    case 'minLength':
      return { rank: Rank.Type, code: 'invalid_parameter', param, message: `'${path}' must not be empty.` };
    // Too long is a well-formed value outside what is supported, as a ref_name over its bytes.
    case 'maxLength':
      return {
        rank: Rank.Value,
        code: 'unsupported_value',
        param,
        message: `'${path}' must be at most ${String(params['limit'])} characters; got ${codePoints(lookup(data, error.instancePath))}.`,
      };
    case URL_MAX_LENGTH_KEYWORD:
      return {
        rank: Rank.Value,
        code: 'unsupported_value',
        param,
        message: `'${path}' is a URL of ${String(lookup(data, error.instancePath)).length} characters; at most ${INPUT_LIMITS.urlChars} are allowed.`,
      };
    case 'enum':
    case 'const':
      return {
        rank: Rank.Value,
        code: 'unsupported_value',
        param,
        message: `'${path}' must be one of ${JSON.stringify(params['allowedValues'] ?? [params['allowedValue']])}; got ${echo(JSON.stringify(lookup(data, error.instancePath)) ?? 'nothing')}.`,
      };
    case 'minimum':
    case 'maximum':
      return {
        rank: Rank.Value,
        code: 'unsupported_value',
        param,
        message: `'${path}' must be ${error.keyword === 'minimum' ? '>=' : '<='} ${String(params['limit'])}; got ${String(lookup(data, error.instancePath))}.`,
      };
    case 'minItems':
    case 'maxItems':
      return {
        rank: Rank.Value,
        code: 'unsupported_value',
        param,
        message: `'${path}' must hold ${error.keyword === 'minItems' ? 'at least' : 'at most'} ${String(params['limit'])} items.`,
      };
    default:
      return { rank: Rank.Type, code: 'invalid_parameter', param, message: `'${path}' is invalid: ${error.message ?? error.keyword}.` };
  }
}

function codePoints(value: unknown): number {
  return typeof value === 'string' ? [...value].length : 0;
}

/** True when `value` is an https URL longer than `max` (a data URL is bounded by the body, not here). */
export function urlTooLong(value: string, max: number): boolean {
  return value.length > max && /^https:/i.test(value);
}

function describePattern(param: string): string {
  return param === 'size' ? 'WIDTHxHEIGHT, e.g. 1024x1024' : 'a different form';
}

function lookup(data: unknown, pointer: string): unknown {
  let current: unknown = data;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) current = current[Number(key)];
    else if (isObject(current)) current = current[key];
    else return undefined;
  }
  return current;
}

function utf8Bytes(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

/** Rules of a video row that a JSON Schema cannot express. */
function videoRules(row: VideoModelRow, body: Record<string, unknown>, input: RequestInput, found: Candidate[]): void {
  if (row.atLeastOneOf) {
    const present = row.atLeastOneOf.filter((name) => body[name] !== undefined);
    // A field of the wrong type is reported as a type error, not as "missing".
    const allArrays = present.every((name) => Array.isArray(body[name]));
    const anyItem = present.some((name) => Array.isArray(body[name]) && (body[name] as unknown[]).length > 0);
    if (allArrays && !anyItem) {
      found.push({
        rank: Rank.Missing,
        code: 'missing_parameter',
        param: 'images',
        message: `At least one reference is required: one of ${row.atLeastOneOf.map((n) => `'${n}'`).join(', ')} must hold an item.`,
      });
    }
  }
  if (row.imageOptions && isObject(body['extra'])) {
    const options = body['extra']['image_options'];
    if (Array.isArray(options)) {
      const images = body['images'];
      if (Array.isArray(images) && options.length > images.length) {
        found.push({
          rank: Rank.Type,
          code: 'invalid_parameter',
          param: 'extra',
          message: `'extra.image_options' has ${options.length} items but 'images' has ${images.length}; it is aligned by position with 'images'.`,
        });
      }
      options.forEach((option, index) => {
        const name = isObject(option) ? option['ref_name'] : undefined;
        if (typeof name === 'string' && utf8Bytes(name) > (row.imageOptions?.refNameMaxBytes ?? 30)) {
          found.push({
            rank: Rank.Value,
            code: 'unsupported_value',
            param: 'extra',
            message: `'extra.image_options[${index}].ref_name' is ${utf8Bytes(name)} UTF-8 bytes; at most ${row.imageOptions?.refNameMaxBytes ?? 30} are allowed.`,
          });
        }
      });
    }
  }
  if (row.imageRule3 && typeof body['image'] === 'string') {
    const image = body['image'];
    const media = mediaCheck(image);
    if (media.ok && media.kind === 'data') {
      const problem = checkRule3Image(decodeDataUrl(image).bytes);
      if (problem) found.push({ rank: Rank.Value, code: 'unsupported_value', param: 'image', message: `'image' ${problem}.` });
    }
  }
  if (row.maxBodyBytes !== undefined && input.bodyBytes > row.maxBodyBytes) {
    found.push({
      rank: Rank.Value,
      code: 'unsupported_value',
      param: 'body',
      message: `The request body is ${input.bodyBytes} bytes; this model accepts at most ${row.maxBodyBytes} bytes (20 MB).`,
    });
  }
}

/**
 * A copy of a body to add defaults to. Not `{ ...body }`: V8 gives a spread copy a shape that
 * the properties added to it afterwards make slow, ~2 µs a create to add them and ~100 ns for
 * each later read of a parameter the body does not have (the data-URL scan reads six), measured
 * with bench/create-path.ts; Object.assign's copy takes them as any object does. A body with its
 * own `__proto__` key, which Object.assign would pass to the prototype's setter, is spread.
 */
function copyOf(body: Record<string, unknown>): Record<string, unknown> {
  return Object.hasOwn(body, '__proto__') ? { ...body } : Object.assign({}, body);
}

/** The aspect ratio a video row fills in when the request has none: its default, if the row takes the parameter. */
function aspectRatioDefault(row: VideoModelRow): string | undefined {
  return row.required.includes('aspect_ratio') || row.optional.includes('aspect_ratio') ? row.aspectRatio?.default : undefined;
}

/** `aspectRatio`: aspectRatioDefault(row), worked out once per row (createValidator), not per request. */
function resolveVideo(row: VideoModelRow, aspectRatio: string | undefined, body: Record<string, unknown>): ResolvedParams {
  const params = copyOf(body);
  params['duration'] ??= 5;
  if (row.resolution) params['resolution'] ??= row.resolution.default;
  if (aspectRatio !== undefined) params['aspect_ratio'] ??= aspectRatio;
  if (row.defaults?.audio_enable !== undefined) params['audio_enable'] ??= row.defaults.audio_enable;
  return params;
}

const SIZE = /^([0-9]{1,6})x([0-9]{1,6})$/;

function imageRules(row: ImageModelRow, body: Record<string, unknown>, found: Candidate[]): void {
  if (body['size'] !== undefined && (body['width'] !== undefined || body['height'] !== undefined)) {
    found.push({
      rank: Rank.Type,
      code: 'invalid_parameter',
      param: 'size',
      message: `'size' cannot be combined with 'width' or 'height'; give one or the other.`,
    });
  }
  const match = typeof body['size'] === 'string' ? SIZE.exec(body['size']) : null;
  if (match) {
    const [w, h] = [Number(match[1]), Number(match[2])];
    if ([w, h].some((side) => side < row.side.min || side > row.side.max)) {
      found.push({
        rank: Rank.Value,
        code: 'unsupported_value',
        param: 'size',
        message: `'size' ${w}x${h} is out of range; each dimension must be ${row.side.min}-${row.side.max}.`,
      });
    }
  }
}

function resolveImage(row: ImageModelRow, body: Record<string, unknown>): ResolvedParams {
  const match = typeof body['size'] === 'string' ? SIZE.exec(body['size']) : null;
  const width = match ? Number(match[1]) : ((body['width'] as number | undefined) ?? row.defaults.width);
  const height = match ? Number(match[2]) : ((body['height'] as number | undefined) ?? row.defaults.height);
  const params: Record<string, unknown> = {
    model: row.id,
    prompt: body['prompt'],
    width,
    height,
    prompt_extend: body['prompt_extend'] === undefined ? row.defaults.prompt_extend : body['prompt_extend'],
    output_format: 'png',
    n: 1,
  };
  if (body['size'] !== undefined) params['size'] = body['size'];
  if (body['seed'] !== undefined) params['seed'] = body['seed'];
  return params;
}

/**
 * Rules of a declared model that its JSON Schema cannot say (docs/guides/models.md): `requires`
 * (the missing one is named), the sides of a `size`, and the kind of a data URL's media.
 */
function declaredRules(params: DeclaredParams, body: Record<string, unknown>, found: Candidate[]): void {
  for (const [name, spec] of Object.entries(params)) {
    const value = body[name];
    if (value === undefined) continue;
    for (const other of spec.requires ?? []) {
      if (body[other] === undefined) {
        found.push({ rank: Rank.Missing, code: 'missing_parameter', param: other, message: `Missing parameter '${other}': '${name}' requires it.` });
      }
    }
    if (spec.type === 'size') {
      const sides = parseSize(value);
      const min = spec.minSide ?? 1;
      const max = spec.maxSide ?? Number.MAX_SAFE_INTEGER;
      if (sides && [sides.width, sides.height].some((side) => side < min || side > max)) {
        found.push({
          rank: Rank.Value,
          code: 'unsupported_value',
          param: name,
          message: `'${name}' ${sides.width}x${sides.height} is out of range; each dimension must be ${min}-${spec.maxSide ?? '…'}.`,
        });
      }
    }
    if (spec.media !== undefined && (spec.type === 'media' || spec.type === 'media[]')) {
      const items = spec.type === 'media' ? [value] : Array.isArray(value) ? value : [];
      items.forEach((item, index) => {
        const mime = typeof item === 'string' ? parseDataUrlHeader(item)?.mime : undefined;
        if (mime !== undefined && !mime.startsWith(`${spec.media}/`)) {
          const path = spec.type === 'media' ? name : `${name}[${index}]`;
          found.push({
            rank: Rank.Value,
            code: 'unsupported_value',
            param: name,
            message: `'${path}' is ${mime || 'untyped'} data; this parameter takes ${spec.media ?? ''} media.`,
          });
        }
      });
    }
  }
}

/** The request with the declared defaults applied: what the task stores and the route's upstream receives. */
function resolveDeclared(row: ModelRow, params: DeclaredParams, body: Record<string, unknown>): ResolvedParams {
  const resolved = copyOf(body);
  for (const [name, spec] of Object.entries(params)) if (spec.default !== undefined) resolved[name] ??= spec.default;
  // As for a built-in image model: the size is also its width and height (what engines and targets read).
  const sides = row.kind === 'image' ? parseSize(resolved['size']) : undefined;
  if (sides) Object.assign(resolved, sides);
  return resolved;
}

export interface ValidatorOptions {
  /** The time, in Unix milliseconds (a declared model is refused from its `retires_at` on); default Date.now. */
  readonly now?: () => number;
}

export interface Validator {
  validate(kind: ModelKind, input: RequestInput): Validated;
}

function fail(c: Candidate): Validated {
  return { ok: false, error: validationError(c.code, c.param, c.message) };
}

function pick(candidates: readonly Candidate[]): Candidate | undefined {
  let best: Candidate | undefined;
  for (const candidate of candidates) if (!best || candidate.rank < best.rank) best = candidate;
  return best;
}

export function createValidator(rows: readonly ModelRow[], options: ValidatorOptions = {}): Validator {
  const now = options.now ?? Date.now;
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, allowUnionTypes: true });
  ajv.addFormat(MEDIA_FORMAT, { type: 'string', validate: (value: string) => mediaCheck(value).ok });
  ajv.addKeyword({
    keyword: URL_MAX_LENGTH_KEYWORD,
    type: 'string',
    schemaType: 'number',
    validate: (max: number, value: string) => !urlTooLong(value, max),
  });
  const compiled = new Map<string, { row: ModelRow; check: ValidateFunction; aspectRatio: string | undefined }>();
  for (const row of rows) {
    const schema: JsonSchema = row.kind === 'video' ? videoRequestSchema(row) : imageRequestSchema(row);
    compiled.set(row.id, { row, check: ajv.compile(schema), aspectRatio: row.kind === 'video' ? aspectRatioDefault(row) : undefined });
  }
  const otherKind = (kind: ModelKind): string => (kind === 'video' ? 'an image' : 'a video');
  const endpoint = (kind: ModelKind): string => (kind === 'video' ? '/v1/images/generations/async' : '/v1/video/generations');

  return {
    validate(kind, input) {
      checkedMedia = input.checkedMedia ?? [];
      try {
        return validateBody(kind, input);
      } finally {
        checkedMedia = [];
      }
    },
  };

  function validateBody(kind: ModelKind, input: RequestInput): Validated {
    const { body } = input;
    if (!isObject(body)) {
      return fail({
        rank: Rank.Body,
        code: 'invalid_parameter',
        param: 'body',
        message: `The request body must be a JSON object; got ${describeValue(body)}.`,
      });
    }
    const model = body['model'];
    if (model === undefined) return fail({ rank: Rank.Model, code: 'missing_parameter', param: 'model', message: `Missing required parameter 'model'.` });
    if (typeof model !== 'string') {
      return fail({ rank: Rank.Model, code: 'invalid_parameter', param: 'model', message: `'model' must be a string; got ${describeValue(model)}.` });
    }
    const entry = input.allowsModel === undefined || input.allowsModel(model) ? compiled.get(model) : undefined;
    if (!entry) {
      return fail({
        rank: Rank.Model,
        code: 'unsupported_value',
        param: 'model',
        message: `Unknown model '${model.slice(0, 200)}'; GET /v1/models lists the models.`,
      });
    }
    if (entry.row.kind !== kind) {
      return fail({
        rank: Rank.Model,
        code: 'unsupported_value',
        param: 'model',
        message: `'${model}' is ${otherKind(kind)} model; create it with POST ${endpoint(kind)}.`,
      });
    }
    const { row } = entry;
    // Only declared rows have a lifecycle: a built-in model pays one property read.
    if (row.lifecycle !== undefined && isRetired(row, now())) {
      return fail({ rank: Rank.Model, code: 'unsupported_value', param: 'model', message: retiredMessage(row) });
    }
    const candidates: Candidate[] = [];
    if (!entry.check(body)) for (const error of entry.check.errors ?? []) candidates.push(fromAjv(error, body));
    if (row.declared) {
      declaredRules(row.declared, body, candidates);
      const worst = pick(candidates);
      return worst ? fail(worst) : { ok: true, row, params: resolveDeclared(row, row.declared, body) };
    }
    if (row.kind === 'video') videoRules(row, body, input, candidates);
    else imageRules(row, body, candidates);
    const worst = pick(candidates);
    if (worst) return fail(worst);
    return { ok: true, row, params: row.kind === 'video' ? resolveVideo(row, entry.aspectRatio, body) : resolveImage(row, body) };
  }
}

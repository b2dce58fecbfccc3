import type { CheckedMedia, JsonSchema } from '../catalog/index.js';
import { readImageHeader } from '../media/image-header.js';
import { ApiError, validationError } from '../errors.js';
import type { FormFile } from './form.js';
import { geometryOf, mapSize } from './size.js';

/**
 * A front-door request in the seed's words: the body the create path validates, how to name a
 * field at fault as the client sent it (`duration` -> `seconds`, ...), and the data URLs made
 * here from file parts (valid by construction: validation does not scan them again).
 */
export interface MappedRequest {
  readonly body: Record<string, unknown>;
  readonly rename: Readonly<Record<string, string>>;
  readonly checkedMedia: readonly CheckedMedia[];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The JSON type(s) a schema property names. */
function typesOf(property: unknown): readonly string[] {
  if (!isObject(property)) return [];
  const type = property['type'];
  return Array.isArray(type) ? type.filter((item): item is string => typeof item === 'string') : typeof type === 'string' ? [type] : [];
}

/**
 * A form carries only strings (node_modules/openai/internal/uploads.mjs: `String(value)` for
 * numbers and booleans): each is read back as the type the model's parameter has. A string that
 * is not one stays a string, and validation names the parameter (`invalid_parameter`).
 */
function fromText(value: unknown, property: unknown): unknown {
  if (Array.isArray(value)) {
    const items = isObject(property) ? property['items'] : undefined;
    return value.map((item) => fromText(item, items));
  }
  if (typeof value !== 'string') return value;
  const types = typesOf(property);
  if (types.includes('string')) return value;
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (types.includes('boolean') && (value === 'true' || value === 'false')) return value === 'true';
  if (types.includes('null') && value === 'null') return null;
  return value;
}

/** `seconds`: a string of whole seconds, or an integer (the `openai` client types it as a string: node_modules/openai/resources/videos.d.ts, `VideoSeconds`). */
function mapSeconds(seconds: unknown): number | ApiError {
  if (typeof seconds === 'number' && Number.isInteger(seconds)) return seconds;
  if (typeof seconds === 'string' && /^\d{1,6}$/.test(seconds)) return Number(seconds);
  return validationError('invalid_parameter', 'seconds', `'seconds' must be a whole number of seconds, as a string ('8') or an integer.`);
}

const IMAGE_TYPES: Readonly<Record<string, string>> = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

/** A file part as a data URL: its type read from its bytes when the sender said nothing useful. */
function fileAsDataUrl(file: FormFile): string {
  const sniffed = IMAGE_TYPES[readImageHeader(file.bytes).format];
  const declared = /^[a-z]+\/[a-z0-9.+-]+$/i.test(file.type) && file.type !== 'application/octet-stream' ? file.type : undefined;
  return `data:${sniffed ?? declared ?? 'application/octet-stream'};base64,${file.bytes.toString('base64')}`;
}

/** `input_reference`: a file part, or `{image_url}` (JSON, or `input_reference[image_url]` in a form); the model's `image`. */
function mapReference(reference: unknown, file: FormFile | undefined): { image: string; checked?: CheckedMedia } | ApiError {
  if (file !== undefined) {
    const image = fileAsDataUrl(file);
    return { image, checked: { value: image, check: { ok: true, kind: 'data' } } };
  }
  if (typeof reference === 'string') return { image: reference };
  if (isObject(reference)) {
    const keys = Object.keys(reference);
    if (keys.includes('file_id')) {
      return validationError(
        'unsupported_value',
        'input_reference',
        `'input_reference.file_id' is not supported here (there is no files API); give 'image_url' or upload the file.`,
      );
    }
    if (typeof reference['image_url'] === 'string' && keys.length === 1) return { image: reference['image_url'] };
  }
  return validationError('invalid_parameter', 'input_reference', `'input_reference' must be a file, or an object {"image_url": "<https:// URL or data URL>"}.`);
}

/** Fields that are the front door's own, mapped onto the model's; the model's names beside them would say it twice. */
const TWINS: Readonly<Record<string, readonly string[]>> = {
  seconds: ['duration'],
  size: ['resolution', 'aspect_ratio'],
  input_reference: ['image'],
};

/**
 * `POST /v1/videos` -> the seed's video create body: `seconds` -> `duration`, `size` ->
 * `resolution` + `aspect_ratio` (size.ts), `input_reference` -> `image`, every other field by its
 * own name. `schema` is the named model's request schema (undefined for an unknown model: the
 * body goes on without the front door's fields and validation refuses the model). Throws the
 * 400 of a field it maps.
 */
export function videoRequest(
  raw: Record<string, unknown>,
  files: Readonly<Record<string, FormFile>>,
  schema: JsonSchema | undefined,
  fromForm: boolean,
): MappedRequest {
  const properties = (schema?.['properties'] ?? {}) as Record<string, unknown>;
  const body: Record<string, unknown> = {};
  const rename: Record<string, string> = {};
  const checkedMedia: CheckedMedia[] = [];
  if (schema === undefined) {
    // No such video model: validation refuses `model` first (decisions' order), whatever else is wrong.
    for (const [name, value] of Object.entries(raw)) if (!(name in TWINS)) body[name] = value;
    return { body, rename, checkedMedia };
  }
  for (const name of Object.keys(files)) {
    if (name !== 'input_reference')
      throw validationError('invalid_parameter', name, `Only 'input_reference' may be a file; '${name.slice(0, 100)}' was sent as one.`);
  }
  for (const [name, value] of Object.entries(raw)) {
    if (name in TWINS) continue;
    body[name] = fromForm ? fromText(value, properties[name]) : value;
  }
  for (const [name, twins] of Object.entries(TWINS)) {
    const given = name in raw || name in files;
    const twin = twins.find((other) => other in raw);
    if (given && twin !== undefined) throw validationError('invalid_parameter', name, `Give '${name}' or '${twin}', not both.`);
  }
  if (raw['seconds'] !== undefined) {
    const seconds = mapSeconds(raw['seconds']);
    if (seconds instanceof ApiError) throw seconds;
    body['duration'] = seconds;
    rename['duration'] = 'seconds';
  }
  if (raw['size'] !== undefined) {
    if ('size' in properties && !('resolution' in properties)) {
      // A declared model that takes a size of its own.
      body['size'] = raw['size'];
    } else {
      const mapped = mapSize(raw['size'], geometryOf(schema));
      if (mapped instanceof ApiError) throw mapped;
      Object.assign(body, mapped);
      rename['resolution'] = 'size';
      rename['aspect_ratio'] = 'size';
    }
  }
  if (raw['input_reference'] !== undefined || files['input_reference'] !== undefined) {
    if (!('image' in properties)) {
      throw validationError('unsupported_parameter', 'input_reference', `This model takes no input image ('input_reference').`);
    }
    const mapped = mapReference(raw['input_reference'], files['input_reference']);
    if (mapped instanceof ApiError) throw mapped;
    body['image'] = mapped.image;
    if (mapped.checked) checkedMedia.push(mapped.checked);
    rename['image'] = 'input_reference';
  }
  return { body, rename, checkedMedia };
}

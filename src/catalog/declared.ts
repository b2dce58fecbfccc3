import { readFileSync } from 'node:fs';
import type {
  DeclaredParam,
  DeclaredParams,
  DeclaredType,
  ImageModelRow,
  Lifecycle,
  MediaKind,
  ModelRow,
  Range,
  VideoInputParam,
  VideoModelRow,
} from './types.js';

/**
 * MEDIAGATE_MODELS_FILE: models the operator declares (docs/guides/models.md). The file is
 * checked whole, every fault with its JSON path, and each model becomes a catalog row like a
 * built-in one: the row's usual fields (duration range, resolutions, aspect ratios, seed) are
 * derived from its parameters, so geometry, prices and routes read it as they read a built-in
 * row; schema.ts and validate.ts take the declared parameters themselves.
 */

export class ModelsConfigError extends Error {
  override readonly name = 'ModelsConfigError';
  readonly exitCode = 78;
  constructor(readonly faults: readonly string[]) {
    super(`invalid models file:\n  ${faults.join('\n  ')}`);
  }
}

const ID = /^[A-Za-z0-9._/-]{1,128}$/;
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const SIZE = /^([0-9]{1,6})x([0-9]{1,6})$/;

const ROOT_FIELDS = new Set(['models']);
const MODEL_FIELDS = new Set(['id', 'kind', 'summary', 'display_name', 'description', 'params', 'lifecycle']);
const DISPLAY_NAME_MAX = 80;
const DESCRIPTION_MAX = 1000;
const LIFECYCLE_FIELDS = new Set(['deprecated_at', 'retires_at', 'successor']);
const SPEC_FIELDS = new Set([
  'type',
  'required',
  'default',
  'enum',
  'minimum',
  'maximum',
  'max_length',
  'media',
  'max_items',
  'requires',
  'min_side',
  'max_side',
]);
const TYPES: readonly DeclaredType[] = ['string', 'integer', 'number', 'boolean', 'media', 'media[]', 'size'];
const MEDIA_KINDS: readonly MediaKind[] = ['image', 'video', 'audio'];

/** Names with a meaning in this interface keep it: their type is fixed (the sandbox and the geometry read them). */
export const MEANINGFUL: Readonly<Record<string, DeclaredType>> = {
  prompt: 'string',
  negative_prompt: 'string',
  duration: 'integer',
  resolution: 'string',
  aspect_ratio: 'string',
  image: 'media',
  end_image: 'media',
  images: 'media[]',
  videos: 'media[]',
  audios: 'media[]',
  audio: 'media',
  audio_enable: 'boolean',
  seed: 'integer',
  size: 'size',
};

/** The media kind a meaningful media name implies when the file does not say. */
const IMPLIED_MEDIA: Readonly<Record<string, MediaKind>> = {
  image: 'image',
  end_image: 'image',
  images: 'image',
  videos: 'video',
  audios: 'audio',
  audio: 'audio',
};

/** Declared names that are also inputs of a built-in video row (their `required`/`optional` lists). */
const VIDEO_INPUTS: ReadonlySet<string> = new Set<VideoInputParam>([
  'negative_prompt',
  'image',
  'end_image',
  'images',
  'videos',
  'audios',
  'audio',
  'audio_enable',
  'aspect_ratio',
]);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const key = (name: string): string => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`);

function fitsType(type: DeclaredType, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'size':
      return typeof value === 'string' && SIZE.test(value);
    case 'media':
    case 'media[]':
      return false;
  }
}

/** `WxH` -> sides; undefined when malformed. */
export function parseSize(value: unknown): { width: number; height: number } | undefined {
  const match = typeof value === 'string' ? SIZE.exec(value) : null;
  return match ? { width: Number(match[1]), height: Number(match[2]) } : undefined;
}

function optionalNumber(raw: Record<string, unknown>, field: string, at: string, faults: string[], integer: boolean, min?: number): number | undefined {
  const value = raw[field];
  if (value === undefined) return undefined;
  const ok = typeof value === 'number' && (integer ? Number.isSafeInteger(value) : Number.isFinite(value)) && (min === undefined || value >= min);
  if (!ok) {
    faults.push(`${at}.${field}: must be ${integer ? 'an integer' : 'a number'}${min === undefined ? '' : ` >= ${min}`}`);
    return undefined;
  }
  return value;
}

/** One parameter's spec; `names` are the model's parameter names (for `requires`). */
function parseParam(name: string, raw: unknown, at: string, names: ReadonlySet<string>, faults: string[]): DeclaredParam | undefined {
  if (!isObject(raw)) {
    faults.push(`${at}: must be an object with "type"`);
    return undefined;
  }
  const before = faults.length;
  for (const field of Object.keys(raw)) if (!SPEC_FIELDS.has(field)) faults.push(`${at}${key(field)}: unknown field (${[...SPEC_FIELDS].join(', ')})`);
  const type = raw['type'];
  if (typeof type !== 'string' || !TYPES.includes(type as DeclaredType)) {
    faults.push(`${at}.type: unknown type ${JSON.stringify(type)} (one of ${TYPES.join(', ')})`);
    return undefined;
  }
  const t = type as DeclaredType;
  const meaning = MEANINGFUL[name];
  if (meaning !== undefined && meaning !== t) faults.push(`${at}.type: '${name}' has a meaning in this interface and must be of type ${meaning}`);
  const numeric = t === 'integer' || t === 'number';
  const notFor = (field: string, what: string): void => {
    if (raw[field] !== undefined) faults.push(`${at}.${field}: only for ${what}`);
  };
  if (raw['required'] !== undefined && typeof raw['required'] !== 'boolean') faults.push(`${at}.required: must be true or false`);
  if (!numeric) notFor('minimum', 'integer and number parameters');
  if (!numeric) notFor('maximum', 'integer and number parameters');
  if (t !== 'string') notFor('max_length', 'string parameters');
  if (t !== 'media' && t !== 'media[]') notFor('media', 'media and media[] parameters');
  if (t !== 'media[]') notFor('max_items', 'media[] parameters');
  if (t !== 'size') notFor('min_side', 'size parameters');
  if (t !== 'size') notFor('max_side', 'size parameters');
  if (t !== 'string' && !numeric) notFor('enum', 'string, integer and number parameters');
  const minimum = numeric ? optionalNumber(raw, 'minimum', at, faults, t === 'integer') : undefined;
  const maximum = numeric ? optionalNumber(raw, 'maximum', at, faults, t === 'integer') : undefined;
  if (minimum !== undefined && maximum !== undefined && maximum < minimum) faults.push(`${at}.maximum: is below minimum (${minimum})`);
  const maxLength = t === 'string' ? optionalNumber(raw, 'max_length', at, faults, true, 1) : undefined;
  const maxItems = t === 'media[]' ? optionalNumber(raw, 'max_items', at, faults, true, 1) : undefined;
  const minSide = t === 'size' ? optionalNumber(raw, 'min_side', at, faults, true, 1) : undefined;
  const maxSide = t === 'size' ? optionalNumber(raw, 'max_side', at, faults, true, 1) : undefined;
  if (minSide !== undefined && maxSide !== undefined && maxSide < minSide) faults.push(`${at}.max_side: is below min_side (${minSide})`);
  let media: MediaKind | undefined;
  if ((t === 'media' || t === 'media[]') && raw['media'] !== undefined) {
    if (typeof raw['media'] !== 'string' || !MEDIA_KINDS.includes(raw['media'] as MediaKind))
      faults.push(`${at}.media: must be one of ${MEDIA_KINDS.join(', ')}`);
    else media = raw['media'] as MediaKind;
  }
  media ??= t === 'media' || t === 'media[]' ? IMPLIED_MEDIA[name] : undefined;
  let values: (string | number)[] | undefined;
  if (raw['enum'] !== undefined && (t === 'string' || numeric)) {
    const list = raw['enum'];
    if (!Array.isArray(list) || list.length === 0) faults.push(`${at}.enum: must be a non-empty array`);
    else {
      list.forEach((value, index) => {
        if (!fitsType(t, value)) faults.push(`${at}.enum[${index}]: ${JSON.stringify(value)} is not of type ${t}`);
      });
      if (new Set(list).size !== list.length) faults.push(`${at}.enum: holds a value twice`);
      values = list as (string | number)[];
    }
  }
  let requires: string[] | undefined;
  if (raw['requires'] !== undefined) {
    const list = raw['requires'];
    if (!Array.isArray(list)) faults.push(`${at}.requires: must be an array of parameter names`);
    else {
      list.forEach((other, index) => {
        if (typeof other !== 'string' || !names.has(other)) faults.push(`${at}.requires[${index}]: ${JSON.stringify(other)} is not a parameter of this model`);
        else if (other === name) faults.push(`${at}.requires[${index}]: a parameter cannot require itself`);
      });
      requires = list.filter((other): other is string => typeof other === 'string');
    }
  }
  const fallback = raw['default'];
  if (fallback !== undefined) {
    if (t === 'media' || t === 'media[]') faults.push(`${at}.default: media parameters take no default`);
    else if (!fitsType(t, fallback)) faults.push(`${at}.default: ${JSON.stringify(fallback)} is not of type ${t}`);
    else {
      if (values !== undefined && !values.includes(fallback as string | number)) faults.push(`${at}.default: ${JSON.stringify(fallback)} is not in its enum`);
      if (typeof fallback === 'number' && ((minimum !== undefined && fallback < minimum) || (maximum !== undefined && fallback > maximum))) {
        faults.push(`${at}.default: ${fallback} is outside its range ${minimum ?? '…'}..${maximum ?? '…'}`);
      }
      if (typeof fallback === 'string' && maxLength !== undefined && [...fallback].length > maxLength) faults.push(`${at}.default: is longer than max_length`);
      const sides = t === 'size' ? parseSize(fallback) : undefined;
      if (sides && [sides.width, sides.height].some((side) => (minSide !== undefined && side < minSide) || (maxSide !== undefined && side > maxSide))) {
        faults.push(`${at}.default: ${sides.width}x${sides.height} is outside its sides ${minSide ?? 1}..${maxSide ?? '…'}`);
      }
    }
  }
  if (faults.length > before) return undefined;
  return {
    type: t,
    required: raw['required'] === true,
    ...(fallback === undefined ? {} : { default: fallback as string | number | boolean }),
    ...(values === undefined ? {} : { enum: values }),
    ...(minimum === undefined ? {} : { minimum }),
    ...(maximum === undefined ? {} : { maximum }),
    ...(maxLength === undefined ? {} : { maxLength }),
    ...(media === undefined ? {} : { media }),
    ...(maxItems === undefined ? {} : { maxItems }),
    ...(requires === undefined ? {} : { requires }),
    ...(minSide === undefined ? {} : { minSide }),
    ...(maxSide === undefined ? {} : { maxSide }),
  };
}

function parseDate(raw: unknown, at: string, faults: string[]): number | undefined {
  if (raw === undefined) return undefined;
  const ms = typeof raw === 'string' && RFC3339.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms)) {
    faults.push(`${at}: must be an RFC 3339 date-time, e.g. "2027-01-15T00:00:00Z"`);
    return undefined;
  }
  return ms;
}

function parseLifecycle(raw: unknown, at: string, faults: string[]): { lifecycle: Lifecycle; successorAt: string } | undefined {
  if (raw === undefined) return undefined;
  if (!isObject(raw)) {
    faults.push(`${at}: must be an object with any of deprecated_at, retires_at, successor`);
    return undefined;
  }
  for (const field of Object.keys(raw))
    if (!LIFECYCLE_FIELDS.has(field)) faults.push(`${at}${key(field)}: unknown field (deprecated_at, retires_at, successor)`);
  const deprecatedAt = parseDate(raw['deprecated_at'], `${at}.deprecated_at`, faults);
  const retiresAt = parseDate(raw['retires_at'], `${at}.retires_at`, faults);
  if (deprecatedAt !== undefined && retiresAt !== undefined && retiresAt < deprecatedAt) faults.push(`${at}.retires_at: is before deprecated_at`);
  const successor = raw['successor'];
  if (successor !== undefined && typeof successor !== 'string') faults.push(`${at}.successor: must be a model id`);
  return {
    lifecycle: {
      ...(deprecatedAt === undefined ? {} : { deprecatedAt }),
      ...(retiresAt === undefined ? {} : { retiresAt }),
      ...(typeof successor === 'string' ? { successor } : {}),
    },
    successorAt: `${at}.successor`,
  };
}

const numericBounds = (spec: DeclaredParam | undefined): Range | null => {
  if (spec === undefined) return null;
  if (spec.enum !== undefined) {
    const numbers = spec.enum.filter((v): v is number => typeof v === 'number');
    return numbers.length === 0 ? null : { min: Math.min(...numbers), max: Math.max(...numbers) };
  }
  return spec.minimum !== undefined && spec.maximum !== undefined ? { min: spec.minimum, max: spec.maximum } : null;
};

const stringValues = (spec: DeclaredParam | undefined): string[] | undefined => spec?.enum?.filter((v): v is string => typeof v === 'string');

/** The words for people a declared model may carry; absent ones are derived (names.ts). */
interface Words {
  readonly summary: string;
  readonly displayName?: string;
  readonly description?: string;
}

/** `display_name`: one line; `description`: one paragraph (no blank line). Both optional. */
function parseWords(raw: Record<string, unknown>, at: string, faults: string[]): Omit<Words, 'summary'> {
  const name = raw['display_name'];
  const text = raw['description'];
  const out: { displayName?: string; description?: string } = {};
  if (name !== undefined) {
    if (typeof name !== 'string' || name.trim() === '' || /[\r\n]/.test(name) || [...name].length > DISPLAY_NAME_MAX)
      faults.push(`${at}.display_name: must be one non-empty line of at most ${DISPLAY_NAME_MAX} characters`);
    else out.displayName = name.trim();
  }
  if (text !== undefined) {
    if (typeof text !== 'string' || text.trim() === '' || /\n\s*\n/.test(text) || [...text].length > DESCRIPTION_MAX)
      faults.push(`${at}.description: must be one non-empty paragraph (no blank line) of at most ${DESCRIPTION_MAX} characters`);
    else out.description = text.trim();
  }
  return out;
}

/** A declared video model as a catalog row: its built-in fields derived from its parameters. */
function videoRow(id: string, words: Words, params: DeclaredParams, lifecycle: Lifecycle | undefined): VideoModelRow {
  const inputs = Object.keys(params).filter((name) => VIDEO_INPUTS.has(name)) as VideoInputParam[];
  const resolutions = stringValues(params['resolution']);
  const ratios = stringValues(params['aspect_ratio']);
  const seed = params['seed'];
  const audioDefault = params['audio_enable']?.default;
  const resolutionDefault = params['resolution']?.default;
  const ratioDefault = params['aspect_ratio']?.default;
  return {
    id,
    kind: 'video',
    ...words,
    required: inputs.filter((name) => params[name]?.required === true),
    optional: inputs.filter((name) => params[name]?.required !== true),
    duration: numericBounds(params['duration']),
    resolution:
      resolutions && resolutions.length > 0
        ? { values: resolutions, default: typeof resolutionDefault === 'string' ? resolutionDefault : (resolutions[0] ?? '') }
        : null,
    aspectRatio: ratios && ratios.length > 0 ? { values: ratios, ...(typeof ratioDefault === 'string' ? { default: ratioDefault } : {}) } : null,
    seed: { ...(seed?.minimum === undefined ? {} : { min: seed.minimum }), ...(seed?.maximum === undefined ? {} : { max: seed.maximum }) },
    ...(typeof audioDefault === 'boolean' ? { defaults: { audio_enable: audioDefault } } : {}),
    declared: params,
    ...(lifecycle === undefined ? {} : { lifecycle }),
  };
}

/** A declared image model as a catalog row: sides and default size from its `size` parameter. */
function imageRow(id: string, words: Words, params: DeclaredParams, lifecycle: Lifecycle | undefined): ImageModelRow {
  const size = params['size'];
  const sides = parseSize(size?.default) ?? { width: 1024, height: 1024 };
  const seed = params['seed'];
  return {
    id,
    kind: 'image',
    ...words,
    side: { min: size?.minSide ?? 1, max: size?.maxSide ?? 16384 },
    defaults: { width: sides.width, height: sides.height, prompt_extend: false },
    seed: { min: seed?.minimum ?? Number.MIN_SAFE_INTEGER, ...(seed?.maximum === undefined ? {} : { max: seed.maximum }), nullable: false },
    promptExtendNullable: false,
    declared: params,
    ...(lifecycle === undefined ? {} : { lifecycle }),
  };
}

/**
 * Checks the file's text; `builtIn` are the built-in rows (a declared id must differ from them,
 * a successor may name them). Throws ModelsConfigError with every fault.
 */
export function parseModelsFile(text: string, builtIn: readonly ModelRow[]): ModelRow[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ModelsConfigError([`(file): not valid JSON: ${err instanceof Error ? err.message : String(err)}`]);
  }
  if (!isObject(doc)) throw new ModelsConfigError(['(root): must be an object with "models"']);
  const faults: string[] = [];
  for (const field of Object.keys(doc)) if (!ROOT_FIELDS.has(field)) faults.push(`${key(field).replace(/^\./, '')}: unknown field (models)`);
  if (!Array.isArray(doc['models'])) throw new ModelsConfigError([...faults, 'models: must be an array of models']);
  const builtInKinds = new Map(builtIn.map((row) => [row.id, row.kind]));
  const declaredKinds = new Map<string, string>();
  for (const raw of doc['models']) {
    if (isObject(raw) && typeof raw['id'] === 'string' && !declaredKinds.has(raw['id'])) declaredKinds.set(raw['id'], String(raw['kind']));
  }
  const rows: ModelRow[] = [];
  const seen = new Set<string>();
  const successors: { at: string; id: string; of: string; kind: string }[] = [];
  doc['models'].forEach((raw: unknown, index: number) => {
    const at = `models[${index}]`;
    if (!isObject(raw)) {
      faults.push(`${at}: must be an object with id, kind, summary, params`);
      return;
    }
    const before = faults.length;
    for (const field of Object.keys(raw)) if (!MODEL_FIELDS.has(field)) faults.push(`${at}${key(field)}: unknown field (${[...MODEL_FIELDS].join(', ')})`);
    const id = raw['id'];
    if (typeof id !== 'string' || !ID.test(id)) faults.push(`${at}.id: must be 1-128 characters of A-Z a-z 0-9 . _ - /`);
    else if (builtInKinds.has(id)) faults.push(`${at}.id: '${id}' is a built-in model`);
    else if (seen.has(id)) faults.push(`${at}.id: '${id}' is declared twice`);
    if (typeof id === 'string') seen.add(id);
    const kind = raw['kind'];
    if (kind !== 'video' && kind !== 'image') faults.push(`${at}.kind: must be "video" or "image"`);
    const summary = raw['summary'];
    if (typeof summary !== 'string' || summary.trim() === '' || /[\r\n]/.test(summary)) faults.push(`${at}.summary: must be one non-empty line of text`);
    const words = parseWords(raw, at, faults);
    const params: Record<string, DeclaredParam> = {};
    if (!isObject(raw['params'])) faults.push(`${at}.params: must be an object of parameter name -> spec`);
    else {
      const names = new Set(Object.keys(raw['params']));
      for (const [name, spec] of Object.entries(raw['params'])) {
        const pat = `${at}.params${key(name)}`;
        if (!PARAM_NAME.test(name)) faults.push(`${pat}: a parameter name is a letter or _ then letters, digits or _ (at most 64)`);
        else if (name === 'model') faults.push(`${pat}: 'model' is every model's; it is not declared`);
        else if (name === 'size' && kind === 'video') faults.push(`${pat}: 'size' is an image model's parameter`);
        const parsed = parseParam(name, spec, pat, names, faults);
        if (parsed) params[name] = parsed;
      }
    }
    const life = parseLifecycle(raw['lifecycle'], `${at}.lifecycle`, faults);
    if (life?.lifecycle.successor !== undefined && typeof id === 'string' && typeof kind === 'string') {
      successors.push({ at: life.successorAt, id: life.lifecycle.successor, of: id, kind });
    }
    if (faults.length > before || typeof id !== 'string' || typeof summary !== 'string') return;
    const row = { summary, ...words };
    rows.push(kind === 'video' ? videoRow(id, row, params, life?.lifecycle) : imageRow(id, row, params, life?.lifecycle));
  });
  for (const { at, id, of, kind } of successors) {
    const successorKind = builtInKinds.get(id) ?? declaredKinds.get(id);
    if (successorKind === undefined) faults.push(`${at}: '${id}' is neither a built-in nor a declared model`);
    else if (id === of) faults.push(`${at}: a model cannot succeed itself`);
    else if (successorKind !== kind)
      faults.push(`${at}: '${id}' is ${successorKind === 'video' ? 'a video' : 'an image'} model; a successor is of the same kind`);
  }
  if (faults.length > 0) throw new ModelsConfigError(faults);
  return rows;
}

/** Reads and checks the file; no path: no declared models. */
export function loadModelsFile(path: string | undefined, builtIn: readonly ModelRow[]): ModelRow[] {
  if (path === undefined) return [];
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
    throw new ModelsConfigError([`(file): cannot read ${path}: ${code}`]);
  }
  return parseModelsFile(text, builtIn);
}

/**
 * Generates the SDK's types from the server's own definitions:
 * - src/client/models.generated.ts from the catalog: one request type per model, derived from the
 *   same JSON Schema the server validates with (src/catalog/schema.ts), so a parameter a model
 *   does not accept, or a value outside its list, is a compile error in the client;
 * - src/client/wire.generated.ts from the wire shapes (src/wire/task-bodies.ts): the response
 *   types of tasks, from the JSON Schemas the OpenAPI document carries; and those of
 *   `GET /v1/tasks/recent` from its route's components (src/http/routes/recent-tasks-docs.ts).
 *
 *   npm run generate            writes the files
 *   npm run generate -- --check exits 1 when a file is stale (test/client-generated.test.ts does the same)
 *
 * What the types express: the exact accepted keys, required inputs, string-literal unions for listed
 * values (resolution, aspect_ratio, output_format, n), `size` as `WIDTHxHEIGHT` and exclusive of
 * `width`/`height`, nullability. What they cannot express (numeric ranges, item counts, "at least
 * one of") is written into each property's JSDoc and checked by the server.
 *
 * The SDK imports nothing of the server at run time: the generated files are self-contained.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MODELS, description, displayName, imageRequestSchema, videoRequestSchema, type JsonSchema, type ModelRow } from '../src/catalog/index.js';
import { recentTasksDocs } from '../src/http/routes/recent-tasks-docs.js';
import { ref } from '../src/http/routes/docs-parts.js';
import { IMAGE_CREATED_SCHEMA, IMAGE_STATUSES, TASK_ERROR_SCHEMA, VIDEO_STATUSES, imageStatusSchema, videoTaskSchema } from '../src/wire/task-bodies.js';

export const GENERATED_PATH = fileURLToPath(new URL('../src/client/models.generated.ts', import.meta.url));
export const WIRE_GENERATED_PATH = fileURLToPath(new URL('../src/client/wire.generated.ts', import.meta.url));

const MEDIA_FORMAT = 'media-input';
/** Image dimensions: `size` is exclusive of `width` and `height` (the server answers invalid_parameter, param size). */
const DIMENSIONS = ['size', 'width', 'height'] as const;

type Schema = Readonly<Record<string, unknown>>;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function properties(schema: Schema): [string, Schema][] {
  const props = schema['properties'];
  if (!isSchema(props)) return [];
  return Object.entries(props).filter((entry): entry is [string, Schema] => isSchema(entry[1]));
}

function requiredKeys(schema: Schema): Set<string> {
  const required = schema['required'];
  return new Set(Array.isArray(required) ? required.filter((key): key is string => typeof key === 'string') : []);
}

function typeNames(schema: Schema): string[] {
  const type = schema['type'];
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((name): name is string => typeof name === 'string');
  return [];
}

/** A TypeScript literal for a JSON value of an enum or const. */
function literal(value: unknown): string {
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  throw new Error(`cannot express ${JSON.stringify(value)} as a literal type`);
}

/** The TypeScript type of one property schema. `name` lets `size` become the template type. */
function tsType(schema: Schema, name: string, indent: string): string {
  const types = typeNames(schema);
  const nullable = types.includes('null');
  const withNull = (type: string): string => (nullable ? `${type} | null` : type);
  if ('const' in schema) return literal(schema['const']);
  const values = schema['enum'];
  if (Array.isArray(values)) {
    const union = values.map(literal);
    if (nullable && !values.includes(null)) union.push('null');
    return union.join(' | ');
  }
  const parts: string[] = [];
  for (const type of types) {
    switch (type) {
      case 'string':
        if (schema['format'] === MEDIA_FORMAT) parts.push('MediaInput');
        else if (name === 'size') parts.push('ImageSize');
        else parts.push('string');
        break;
      case 'integer':
      case 'number':
        parts.push('number');
        break;
      case 'boolean':
        parts.push('boolean');
        break;
      case 'null':
        break;
      case 'array': {
        const items = schema['items'];
        const item = isSchema(items) ? tsType(items, `${name}[]`, indent) : 'unknown';
        parts.push(item.includes('|') || item.includes('{') ? `ReadonlyArray<${item}>` : `readonly ${item}[]`);
        break;
      }
      case 'object':
        parts.push(objectType(schema, `${indent}  `));
        break;
      default:
        throw new Error(`property ${name}: unsupported JSON Schema type ${type}`);
    }
  }
  if (parts.length === 0) throw new Error(`property ${name}: no type`);
  return withNull(parts.join(' | '));
}

function objectType(schema: Schema, indent: string): string {
  const required = requiredKeys(schema);
  const lines = properties(schema).map(([key, prop]) => {
    const doc = docLines(prop)
      .map((line) => `${indent}${line}\n`)
      .join('');
    return `${doc}${indent}readonly ${key}${required.has(key) ? '' : '?'}: ${tsType(prop, key, indent)};`;
  });
  return `{\n${lines.join('\n')}\n${indent.slice(2)}}`;
}

const escapeDoc = (text: string): string => text.replace(/\*\//g, '*\\/');

/** What the type cannot say, as prose: ranges, item counts, non-empty strings, defaults. */
function constraintText(schema: Schema): string[] {
  const notes: string[] = [];
  const min = schema['minimum'];
  const max = schema['maximum'];
  if (typeNames(schema).includes('integer')) {
    if (typeof min === 'number' && typeof max === 'number') notes.push(`Integer from ${min} to ${max}.`);
    else if (typeof min === 'number') notes.push(`Integer >= ${min}.`);
    else if (typeof max === 'number') notes.push(`Integer <= ${max}.`);
    else if (!Array.isArray(schema['enum'])) notes.push('Integer.');
  }
  const minItems = schema['minItems'];
  const maxItems = schema['maxItems'];
  if (typeof minItems === 'number' && typeof maxItems === 'number') notes.push(`${minItems} to ${maxItems} items.`);
  else if (typeof maxItems === 'number') notes.push(`At most ${maxItems} items.`);
  else if (typeof minItems === 'number') notes.push(`At least ${minItems} items.`);
  if (schema['minLength'] === 1) notes.push('Non-empty.');
  if ('default' in schema) notes.push(`Default: \`${String(schema['default'])}\`.`);
  return notes;
}

function docLines(schema: Schema): string[] {
  const description = typeof schema['description'] === 'string' ? schema['description'] : '';
  const text = [description, ...constraintText(schema)].filter((part) => part !== '').join(' ');
  return text === '' ? [] : [`/** ${escapeDoc(text)} */`];
}

function property(key: string, schema: Schema, required: boolean, indent = '  ', type?: string): string {
  const doc = docLines(schema)
    .map((line) => `${indent}${line}\n`)
    .join('');
  return `${doc}${indent}readonly ${key}${required ? '' : '?'}: ${type ?? tsType(schema, key, indent)};`;
}

/** `vendora/famw-2.7-i2v` -> `VendoraFamw27I2v`. */
export function typeName(id: string): string {
  const name = id
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== '')
    .map((part) => part[0]?.toUpperCase() + part.slice(1))
    .join('');
  return /^[0-9]/.test(name) ? `M${name}` : name;
}

function schemaOf(row: ModelRow): JsonSchema {
  return row.kind === 'video' ? videoRequestSchema(row) : imageRequestSchema(row);
}

function endpointOf(row: ModelRow): string {
  return row.kind === 'video' ? 'POST /v1/video/generations' : 'POST /v1/images/generations/async';
}

function modelDoc(row: ModelRow, extra: readonly string[] = []): string {
  const lines = [`${displayName(row)}: \`${row.id}\` (${endpointOf(row)}).`, '', description(row), ...extra];
  return `/**\n${lines.map((line) => (line === '' ? ' *' : ` * ${escapeDoc(line)}`)).join('\n')}\n */\n`;
}

function videoNotes(row: ModelRow): string[] {
  if (row.kind !== 'video') return [];
  const notes: string[] = [];
  if (row.atLeastOneOf) notes.push(`At least one of ${row.atLeastOneOf.map((key) => `\`${key}\``).join(', ')} must hold an item.`);
  if (row.maxBodyBytes !== undefined) notes.push(`The whole request body must not exceed ${row.maxBodyBytes} bytes.`);
  if (row.imageRule3) notes.push('A data-URL `image` must be PNG or JPEG, at most 10 MiB, at least 300x300, width/height 0.4 to 2.5.');
  return notes;
}

function videoModel(row: ModelRow, name: string): string {
  const schema = schemaOf(row);
  const required = requiredKeys(schema);
  const body = properties(schema).map(([key, prop]) => property(key, prop, required.has(key)));
  return `${modelDoc(row, videoNotes(row))}export interface ${name} {\n${body.join('\n')}\n}\n`;
}

function imageModel(row: ModelRow, name: string): string {
  const schema = schemaOf(row);
  const required = requiredKeys(schema);
  const all = properties(schema);
  const dimension = (key: string): key is (typeof DIMENSIONS)[number] => (DIMENSIONS as readonly string[]).includes(key);
  const common = all.filter(([key]) => !dimension(key)).map(([key, prop]) => property(key, prop, required.has(key)));
  const dims = new Map(all.filter(([key]) => dimension(key)));
  const size = dims.get('size');
  const width = dims.get('width');
  const height = dims.get('height');
  if (!size || !width || !height) throw new Error(`${row.id}: an image schema without size, width and height`);
  const inner = '      ';
  const never = (key: string): string => `${inner}readonly ${key}?: never;`;
  const sizeForm = [property('size', size, false, inner), never('width'), never('height')].join('\n');
  const sidesForm = [never('size'), property('width', width, false, inner), property('height', height, false, inner)].join('\n');
  return (
    `${modelDoc(row, ['Give either `size`, or `width` and/or `height` (the other side takes its default); not both.'])}` +
    `export type ${name} = {\n${common.join('\n')}\n} & (\n  | {\n${sizeForm}\n    }\n  | {\n${sidesForm}\n    }\n);\n`
  );
}

/** The whole generated file, deterministic for a given catalog. */
export function renderClientModels(rows: readonly ModelRow[] = MODELS): string {
  const names = new Map<string, string>();
  for (const row of rows) {
    const name = `${typeName(row.id)}Params`;
    const clash = [...names.entries()].find(([, existing]) => existing === name);
    if (clash) throw new Error(`models ${clash[0]} and ${row.id} both map to the type name ${name}`);
    names.set(row.id, name);
  }
  const nameOf = (row: ModelRow): string => names.get(row.id) ?? '';
  const video = rows.filter((row) => row.kind === 'video');
  const image = rows.filter((row) => row.kind === 'image');
  const map = (list: readonly ModelRow[]): string => list.map((row) => `  ${literal(row.id)}: ${nameOf(row)};`).join('\n');
  const ids = (list: readonly ModelRow[]): string => list.map((row) => `  ${literal(row.id)},`).join('\n');
  return [
    '// Generated by scripts/generate-client-types.ts from the catalog (src/catalog). Do not edit:',
    '// run `npm run generate`. test/client-generated.test.ts fails when this file is stale.',
    '//',
    '// One request type per model. Numeric ranges, item counts and "at least one of" rules cannot be',
    '// types; they are in each JSDoc and the server checks them (a ValidationError at run time).',
    '',
    '/** A media input: an `https://` URL or a Base64 data URL (`data:<mime>;base64,...`); see `toDataURL`. */',
    'export type MediaInput = string;',
    '',
    '/** `WIDTHxHEIGHT` in pixels with a lowercase `x`, e.g. `1280x720`. */',
    'export type ImageSize = `${number}x${number}`;',
    '',
    ...video.map((row) => videoModel(row, nameOf(row))),
    ...image.map((row) => imageModel(row, nameOf(row))),
    '/** Every video model id, mapped to its request parameters. */',
    `export interface VideoModels {\n${map(video)}\n}`,
    '',
    '/** Every image model id, mapped to its request parameters. */',
    `export interface ImageModels {\n${map(image)}\n}`,
    '',
    'export type VideoModelId = keyof VideoModels;',
    'export type ImageModelId = keyof ImageModels;',
    'export type ModelId = VideoModelId | ImageModelId;',
    '',
    '/** The parameters of `videos.create`: a union discriminated by `model`. */',
    'export type VideoCreateParams = VideoModels[VideoModelId];',
    '/** The parameters of `images.create`: a union discriminated by `model`. */',
    'export type ImageCreateParams = ImageModels[ImageModelId];',
    '',
    `export const VIDEO_MODEL_IDS: readonly VideoModelId[] = [\n${ids(video)}\n];`,
    '',
    `export const IMAGE_MODEL_IDS: readonly ImageModelId[] = [\n${ids(image)}\n];`,
    '',
  ].join('\n');
}

// --- response types, from the wire shapes -----------------------------------------------------

/** A type written by name wherever its schema appears (compared as JSON). */
type Named = ReadonlyMap<string, string>;

function wireType(schema: Schema, indent: string, named: Named, top = false): string {
  const name = top ? undefined : named.get(JSON.stringify(schema));
  if (name !== undefined) return name;
  const oneOf = schema['oneOf'];
  if (Array.isArray(oneOf)) return oneOf.map((branch) => wireType(isSchema(branch) ? branch : {}, indent, named)).join(' | ');
  if ('const' in schema) return literal(schema['const']);
  const values = schema['enum'];
  if (Array.isArray(values)) return values.map(literal).join(' | ');
  const parts = typeNames(schema).map((type) => {
    switch (type) {
      case 'string':
        return 'string';
      case 'integer':
      case 'number':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array': {
        const items = schema['items'];
        const item = isSchema(items) ? wireType(items, indent, named) : 'unknown';
        return /^[A-Za-z]+$/.test(item) ? `readonly ${item}[]` : `ReadonlyArray<${item}>`;
      }
      case 'object':
        return wireObject(schema, indent, named);
      default:
        throw new Error(`unsupported JSON Schema type ${type} in a wire shape`);
    }
  });
  if (parts.length === 0) throw new Error(`a wire schema without a type: ${JSON.stringify(schema)}`);
  return parts.join(' | ');
}

function wireObject(schema: Schema, indent: string, named: Named): string {
  const required = requiredKeys(schema);
  const inner = `${indent}  `;
  const lines = properties(schema).map(([key, prop]) => {
    const doc = docOf(prop)
      .map((line) => `${inner}${line}\n`)
      .join('');
    return `${doc}${inner}readonly ${key}${required.has(key) ? '' : '?'}: ${wireType(prop, inner, named)};`;
  });
  // Inline objects stay on one line when short, as a person would write them.
  const flat = properties(schema).every(([, prop]) => docOf(prop).length === 0)
    ? `{ ${lines.map((line) => line.trim().replace(/;$/, '')).join('; ')} }`
    : undefined;
  if (flat !== undefined && flat.length <= 80 && indent !== '') return flat;
  return `{\n${lines.join('\n')}\n${indent}}`;
}

function docOf(schema: Schema): string[] {
  const description = schema['description'];
  return typeof description === 'string' && description !== '' ? [`/** ${escapeDoc(description)} */`] : [];
}

function dataOf(envelope: Schema): Schema {
  const data = properties(envelope).find(([key]) => key === 'data')?.[1];
  if (data === undefined) throw new Error('an image envelope schema without data');
  return data;
}

/** A component schema of the recent tasks' route, which refers to the others by `$ref`. */
function recentComponent(name: 'RecentTask' | 'RecentModel' | 'RecentTasks'): Schema {
  const schema = recentTasksDocs.components?.[name];
  if (!isSchema(schema)) throw new Error(`the recent tasks' docs have no component ${name}`);
  return schema;
}

/** The whole generated file of response types, deterministic for given wire schemas. */
export function renderClientWire(): string {
  const videoStatus: Schema = { enum: VIDEO_STATUSES };
  const imageStatus: Schema = { enum: IMAGE_STATUSES };
  const named: Named = new Map([
    [JSON.stringify(videoStatus), 'TaskStatus'],
    [JSON.stringify(imageStatus), 'ImageTaskStatus'],
    [JSON.stringify(TASK_ERROR_SCHEMA), 'TaskError'],
    [JSON.stringify(ref('RecentTask')), 'RecentTask'],
    [JSON.stringify(ref('RecentModel')), 'RecentModel'],
  ]);
  const declare = (doc: string, name: string, schema: Schema): string => `/** ${doc} */\nexport interface ${name} ${wireObject(schema, '', named)}\n`;
  return [
    '// Generated by scripts/generate-client-types.ts from the wire shapes (src/wire) and the route docs. Do not edit:',
    '// run `npm run generate`. test/client-generated.test.ts fails when this file is stale.',
    '',
    "/** Lifecycle of a task, in the video family's words (image statuses are mapped onto these). */",
    `export type TaskStatus = ${wireType(videoStatus, '', new Map(), true)};`,
    '',
    "/** The image family's status words. */",
    `export type ImageTaskStatus = ${wireType(imageStatus, '', new Map(), true)};`,
    '',
    declare('The error object of a failed video task.', 'TaskError', TASK_ERROR_SCHEMA),
    declare('`GET /v1/video/generations/{id}`; timestamps are Unix seconds.', 'VideoTask', videoTaskSchema()),
    declare('The `data` of `GET /v1/images/generations/async/{id}` (the SDK unwraps the envelope).', 'ImageTask', dataOf(imageStatusSchema())),
    declare('The `data` of `POST /v1/images/generations/async`.', 'ImageTaskCreated', dataOf(IMAGE_CREATED_SCHEMA)),
    declare('One task of `GET /v1/tasks/recent`, of either family; timestamps are Unix seconds.', 'RecentTask', recentComponent('RecentTask')),
    declare('What the recent tasks say of one model among them.', 'RecentModel', recentComponent('RecentModel')),
    declare(
      '`GET /v1/tasks/recent`: the key’s newest tasks of both families, and per model among them.',
      'RecentTasks',
      recentComponent('RecentTasks'),
    ).trimEnd(),
    '',
  ].join('\n');
}

/** Every generated file and its text. */
export function renderAll(): ReadonlyArray<readonly [string, string]> {
  return [
    [GENERATED_PATH, renderClientModels()],
    [WIRE_GENERATED_PATH, renderClientWire()],
  ];
}

async function main(argv: readonly string[]): Promise<number> {
  let stale = 0;
  for (const [path, text] of renderAll()) {
    if (argv.includes('--check')) {
      const current = await readFile(path, 'utf8').catch(() => '');
      if (current === text) continue;
      process.stderr.write(`${path} is stale: run \`npm run generate\`.\n`);
      stale += 1;
      continue;
    }
    await writeFile(path, text);
    process.stdout.write(`wrote ${path}\n`);
  }
  return stale === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}

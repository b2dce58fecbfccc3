import type { Command } from 'commander';
import type { ModelInfo } from '../../client/index.js';
import { action, addConnectionOptions, makeClient, usageExit, type ConnectionFlags } from './context.js';

interface ModelsFlags extends ConnectionFlags {
  readonly json?: boolean;
}

type Schema = Readonly<Record<string, unknown>>;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function types(schema: Schema): string[] {
  const type = schema['type'];
  if (typeof type === 'string') return [type];
  return Array.isArray(type) ? type.filter((name): name is string => typeof name === 'string') : [];
}

/** `string`, `integer`, `media`, `media[]`, `integer|null`, ... */
function typeText(schema: Schema): string {
  return types(schema)
    .map((type) => {
      if (type === 'string' && schema['format'] === 'media-input') return 'media';
      if (type === 'array') {
        const items = schema['items'];
        return `${isSchema(items) ? typeText(items) : 'any'}[]`;
      }
      return type;
    })
    .join('|');
}

const show = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** What values the server accepts: the list, the range, the item count, or the shape. */
function valuesText(schema: Schema): string {
  if ('const' in schema) return show(schema['const']);
  const values = schema['enum'];
  if (Array.isArray(values)) return values.map(show).join(', ');
  const min = schema['minimum'];
  const max = schema['maximum'];
  if (typeof min === 'number' && typeof max === 'number') return `${min} to ${max}`;
  if (typeof min === 'number') return `>= ${min}`;
  if (typeof max === 'number') return `<= ${max}`;
  const minItems = schema['minItems'];
  const maxItems = schema['maxItems'];
  if (typeof maxItems === 'number') return `${typeof minItems === 'number' ? minItems : 0} to ${maxItems} items`;
  if (schema['pattern'] === '\\S') return 'not blank';
  if (typeof schema['pattern'] === 'string') return /x/.test(schema['pattern']) ? 'WIDTHxHEIGHT' : `pattern ${schema['pattern']}`;
  if (types(schema).includes('object')) {
    const props = schema['properties'];
    return isSchema(props) ? `object: ${Object.keys(props).join(', ')}` : 'object';
  }
  return '';
}

/** Columns padded to the widest cell; the last column is not padded. */
export function table(rows: ReadonlyArray<readonly string[]>): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row
        .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A model's parameters as a table: name, type, required, accepted values or range, default, description. */
export function formatModel(model: ModelInfo): string {
  const schema = model.schema;
  const required = new Set(Array.isArray(schema['required']) ? schema['required'] : []);
  const props = isSchema(schema['properties']) ? Object.entries(schema['properties']) : [];
  const rows: string[][] = [['PARAMETER', 'TYPE', 'REQUIRED', 'VALUES', 'DEFAULT', 'DESCRIPTION']];
  for (const [name, prop] of props) {
    if (!isSchema(prop)) continue;
    rows.push([
      name,
      typeText(prop),
      required.has(name) ? 'yes' : '',
      valuesText(prop),
      'default' in prop ? show(prop['default']) : '',
      typeof prop['description'] === 'string' ? prop['description'] : '',
    ]);
  }
  return [`${model.display_name}: ${model.id}  (${model.kind}, POST ${model.endpoint})`, model.description, '', table(rows)].join('\n');
}

/** `mediagate models [ID]` */
/**
 * `check`: the operator's `models check [file]` (src/cli/models.ts), given by the full CLI only:
 * the light package's bin (`mediagate-client`) has no server code to check a file with, and a
 * reference here would bundle the catalog into it.
 */
export function registerModelsCommand(program: Command, check?: (file: string | undefined) => Promise<number>): void {
  const models = addConnectionOptions(
    program
      .command('models')
      .argument('[id]', 'a model id, to show its parameters, ranges and defaults')
      .description('list the models, or show one model’s parameters'),
  )
    .option('--json', 'print the model list or the model (with its JSON Schema) as JSON')
    .exitOverride(usageExit)
    .action(
      action(async (id: string | undefined, flags: ModelsFlags) => {
        const client = makeClient(flags);
        if (id !== undefined) {
          const model = await client.models.retrieve(id);
          process.stdout.write(flags.json ? `${JSON.stringify(model, null, 2)}\n` : `${formatModel(model)}\n`);
          return;
        }
        const models = await client.models.list();
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(models, null, 2)}\n`);
          return;
        }
        // The one-line summary: the paragraph is shown by `mediagate models <id>`.
        const rows = [['MODEL', 'NAME', 'KIND', 'SUMMARY'], ...models.map((model) => [model.id, model.display_name, model.kind, model.summary])];
        process.stdout.write(`${table(rows)}\n\nShow a model's parameters: mediagate models <id>\n`);
      }),
    );
  // An operator tool beside the client command: `models check` never reaches a server.
  if (check === undefined) return;
  models
    .command('check [file]')
    .description('check the declared models file (default MEDIAGATE_MODELS_FILE) as at start; print the declared models')
    .action(async (file: string | undefined) => {
      process.exitCode = await check(file);
    });
}

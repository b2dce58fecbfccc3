import { resolve } from 'node:path';
import { displayName, lifecycleView, type ModelRow } from '../catalog/index.js';
import { formatTable } from './keys.js';
import { readConfig, readModels } from './serve.js';

function lifecycleText(row: ModelRow, nowMs: number): string {
  const view = lifecycleView(row, nowMs);
  if (view === undefined) return '-';
  const parts = [
    view.retired ? 'retired' : view.deprecated ? 'deprecated' : 'active',
    ...(view.deprecated_at === undefined ? [] : [`deprecated ${view.deprecated_at}`]),
    ...(view.retires_at === undefined ? [] : [`retires ${view.retires_at}`]),
    ...(view.successor === undefined ? [] : [`successor ${view.successor}`]),
  ];
  return parts.join(', ');
}

/**
 * `mediagate models check [file]`: the file (or MEDIAGATE_MODELS_FILE) is checked exactly as at
 * start; a fault exits 78 with one line per JSON path. Valid: a table of the declared models.
 */
export function modelsCheck(file: string | undefined): number {
  const config = readConfig({ workers: false });
  const path = file === undefined ? config.modelsFile : resolve(file);
  const out = (text: string): void => void process.stdout.write(`${text}\n`);
  if (path === undefined) {
    out('MEDIAGATE_MODELS_FILE is not set (and no file was given): only the built-in models are served.');
    return 0;
  }
  const rows = readModels(config, path);
  const now = Date.now();
  out(`${path}: OK (${rows.length} declared model(s)).\n`);
  // The display name as the listing will show it: a missing `display_name` is derived from the id.
  const table = [['MODEL', 'NAME', 'KIND', 'PARAMETERS', 'LIFECYCLE', 'SUMMARY']];
  for (const row of rows) table.push([row.id, displayName(row), row.kind, Object.keys(row.declared ?? {}).join(', '), lifecycleText(row, now), row.summary]);
  out(formatTable(table));
  return 0;
}

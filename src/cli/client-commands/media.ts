import { stat } from 'node:fs/promises';
import { fileToDataURL } from '../../client/index.js';
import { usageError } from './context.js';

/**
 * A media flag's value as the service takes it: an `http(s)://` or `data:` URL is sent as is (the
 * server refuses `http://` with a clear error); anything else is a local file, sent as a data URL.
 */
export async function mediaValue(value: string, flag: string): Promise<string> {
  if (/^(https?:\/\/|data:)/i.test(value)) return value;
  const info = await stat(value).catch(() => undefined);
  if (!info?.isFile()) throw usageError(`mediagate: ${flag} ${value}: no such file (give a file, an https:// URL or a data: URL).`);
  return fileToDataURL(value);
}

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `--set key=value`: the value is JSON when it parses (`5`, `true`, `["a","b"]`, `{"k":1}`), else
 * the text itself; `@path` reads a local file as a data URL.
 */
export async function setValues(entries: readonly string[]): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    const key = eq < 0 ? entry : entry.slice(0, eq);
    if (eq < 0 || !KEY.test(key)) throw usageError(`mediagate: --set ${entry}: expected key=value with a parameter name as key.`);
    const raw = entry.slice(eq + 1);
    if (raw.startsWith('@')) {
      values[key] = await mediaValue(raw.slice(1), `--set ${key}=@`);
      continue;
    }
    try {
      values[key] = JSON.parse(raw) as unknown;
    } catch {
      values[key] = raw;
    }
  }
  return values;
}

/**
 * The defaults the docs state are the defaults the code has: every integer default in the
 * configuration reference (docs/operations/configuration.md) equals `loadConfig({})`, and
 * SECURITY.md's figures match too.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import type { Field } from '../src/config-fields.js';
import { SLICES } from '../src/modules/slices/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const read = (name: string) => readFileSync(join(root, name), 'utf8');
const defaults = loadConfig({ MEDIAGATE_DATA_DIR: '/tmp/unused' });

/**
 * VARIABLE -> Config field: the shared fields from the doc comments of src/config.ts
 * (`/** VAR: ... *\/ readonly field`), each module's own from its slice (src/modules/slices/).
 */
function fieldsByVariable(): Map<string, keyof Config> {
  const map = new Map<string, keyof Config>();
  for (const match of read('src/config.ts').matchAll(/\/\*\* ([A-Z_]+): [^\n]*\*\/\n\s+readonly (\w+):/g)) {
    map.set(match[1] ?? '', (match[2] ?? '') as keyof Config);
  }
  for (const slice of Object.values(SLICES)) {
    for (const [field, { variable }] of Object.entries<Field<unknown>>(slice)) map.set(variable, field as keyof Config);
  }
  return map;
}

/** A config value in the unit the variable is set in (durations are held in ms, set in s). */
function asSet(field: keyof Config, variable: string): unknown {
  const value = defaults[field];
  return variable.endsWith('_S') && typeof value === 'number' ? value / 1000 : value;
}

describe('documented defaults', () => {
  it('every integer default in the configuration reference is the code default', () => {
    const fields = fieldsByVariable();
    const checked: string[] = [];
    for (const match of read('docs/operations/configuration.md').matchAll(/^\| `([A-Z_]+)` \| `(\d+)`/gm)) {
      const variable = match[1] ?? '';
      const field = fields.get(variable);
      if (field === undefined) continue;
      expect(asSet(field, variable), variable).toBe(Number(match[2]));
      checked.push(variable);
    }
    for (const variable of [
      'MEDIAGATE_RATE_LIMIT_PER_MIN',
      'MEDIAGATE_HEADERS_TIMEOUT_S',
      'MEDIAGATE_REQUEST_TIMEOUT_S',
      'MEDIAGATE_MAX_CONNECTIONS',
      'MEDIAGATE_MAX_HEADER_BYTES',
      'MEDIAGATE_WEBHOOK_PER_KEY',
      'MEDIAGATE_SYNC_WAIT_S',
    ]) {
      expect(checked).toContain(variable);
    }
  });

  it("SECURITY.md's figures are the code defaults", () => {
    const security = read('SECURITY.md');
    const figures = [...security.matchAll(/(\d+) requests(?: per minute|\/min)/g)].map((m) => Number(m[1]));
    expect(figures.length).toBeGreaterThan(0);
    for (const figure of figures) expect(figure).toBe(defaults.rateLimitPerMin);
    for (const m of security.matchAll(/(\d+) tasks in flight/g)) expect(Number(m[1])).toBe(defaults.maxTasksInFlight);
    expect(security).toContain(`within ${defaults.headersTimeoutMs / 1000} s`);
    expect(security).toContain(`within ${defaults.requestTimeoutMs / 1000} s`);
    expect(security).toContain(`${defaults.maxConnections} connections`);
    expect(security).toContain(`${defaults.maxHeaderBytes / 1024} KiB`);
  });
});

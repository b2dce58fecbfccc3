/**
 * Each module's own settings are declared in its slice (src/modules/slices/: variable, default,
 * unit, reader) and read once with the shared fields by config.ts: unset, a field holds its
 * declared default; set, the variable in its unit; a bad value stops the start naming the
 * variable; and every slice variable is in the configuration reference.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type Config } from '../src/config.js';
import type { Field } from '../src/config-fields.js';
import { SLICES } from '../src/modules/slices/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const fields = Object.values(SLICES).flatMap((slice) => Object.entries<Field<unknown>>(slice).map(([key, field]) => ({ key: key as keyof Config, field })));

describe("the modules' config slices", () => {
  it('hold their declared default when the variable is unset', () => {
    const config = loadConfig({ MEDIAGATE_DATA_DIR: '/tmp/unused' });
    expect(fields.length).toBeGreaterThanOrEqual(19);
    for (const { key, field } of fields) {
      const value = config[key];
      expect(field.unit === 's' && typeof value === 'number' ? value / 1000 : value, field.variable).toBe(field.default);
    }
  });

  it('read their variable in its unit, into the one configuration', () => {
    const config = loadConfig({
      MEDIAGATE_WEBHOOK_TIMEOUT_S: '3',
      MEDIAGATE_WEBHOOK_PER_KEY: '9',
      MEDIAGATE_WEBHOOK_RETRY_SCHEDULE_MS: '100,250',
      MEDIAGATE_SIGNING_REFRESH_S: '2',
      MEDIAGATE_SYNC_WAIT_S: '5',
      MEDIAGATE_PRICING_FILE: 'prices.json',
      MEDIAGATE_METRICS_PORT: '0',
      MEDIAGATE_METRICS_TOKEN: 'a-token-of-24-characters',
      MEDIAGATE_ENGINE: 'INSTANT',
      MEDIAGATE_STORAGE_RETRY_S: '0',
      MEDIAGATE_FFMPEG_PATH: ' ffmpeg ',
      MEDIAGATE_INSTANT_OUTPUT_BYTES: '4096',
    });
    expect(config).toMatchObject({
      webhookTimeoutMs: 3000,
      webhookPerKey: 9,
      webhookRetryScheduleMs: [100, 250],
      signingRefreshMs: 2000,
      syncWaitMs: 5000,
      pricingFile: join(process.cwd(), 'prices.json'),
      metricsPort: 0,
      metricsToken: 'a-token-of-24-characters',
      engine: 'instant',
      storageRetryMs: 0,
      ffmpegPath: 'ffmpeg',
      instantOutputBytes: 4096,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('stop the start on a bad value, naming the variable', () => {
    for (const { field } of fields.filter(({ field }) => field.unit !== 'path')) {
      expect(() => loadConfig({ [field.variable]: 'not a number!' }), field.variable).toThrow(ConfigError);
      expect(() => loadConfig({ [field.variable]: 'not a number!' }), field.variable).toThrow(field.variable);
    }
  });

  it('are each in the configuration reference', () => {
    const reference = readFileSync(join(root, 'docs/operations/configuration.md'), 'utf8');
    for (const { field } of fields) expect(reference, field.variable).toContain(`| \`${field.variable}\` |`);
  });
});

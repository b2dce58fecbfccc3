import { ConfigError, integer, type Field } from '../../config-fields.js';

const metricsPort: Field<number | undefined> = {
  variable: 'MEDIAGATE_METRICS_PORT',
  about: 'port of the /metrics listener of a `mediagate worker` process; unset: none',
  default: undefined,
  unit: 'count',
  read: (env) => (env['MEDIAGATE_METRICS_PORT']?.trim() ? integer(env, 'MEDIAGATE_METRICS_PORT', 0, 0, 65535) : undefined),
};

/** A bearer token for /metrics, or undefined; checked here so a blank or spaced one stops the start. */
const metricsToken: Field<string | undefined> = {
  variable: 'MEDIAGATE_METRICS_TOKEN',
  about: 'when set, /metrics requires `Authorization: Bearer <token>`; unset: open',
  default: undefined,
  unit: 'text',
  read(env) {
    const raw = env[this.variable];
    if (raw === undefined || raw.trim() === '') return undefined;
    if (!/^[\x21-\x7e]{16,256}$/.test(raw)) throw new ConfigError('MEDIAGATE_METRICS_TOKEN must be 16-256 printable ASCII characters without spaces.');
    return raw;
  },
};

/** Metrics and probes' settings (modules/observability.ts; docs/operations/observability.md). */
export const OBSERVABILITY_SLICE = { metricsPort, metricsToken } as const;

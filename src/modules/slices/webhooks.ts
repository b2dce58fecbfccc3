import { ConfigError, integerField, list, secondsField, type Field } from '../../config-fields.js';

/** Milliseconds between webhook attempts, e.g. `100,200,400`; unset: the built-in schedule (webhooks/schedule.ts). */
const retrySchedule: Field<readonly number[] | undefined> = {
  variable: 'MEDIAGATE_WEBHOOK_RETRY_SCHEDULE_MS',
  about: 'delays between delivery attempts (tests, operations); unset: the built-in schedule',
  default: undefined,
  unit: 'ms',
  read(env) {
    const items = list(env, this.variable);
    if (items.length === 0) return undefined;
    if (items.length > 50 || items.some((item) => !/^\d{1,10}$/.test(item))) {
      throw new ConfigError('MEDIAGATE_WEBHOOK_RETRY_SCHEDULE_MS must be up to 50 comma-separated delays in milliseconds, e.g. 5000,60000,300000.');
    }
    return items.map(Number);
  },
};

/** The webhooks module's settings (modules/webhooks.ts; docs/guides/webhooks.md). */
export const WEBHOOKS_SLICE = {
  webhookTimeoutMs: secondsField('MEDIAGATE_WEBHOOK_TIMEOUT_S', 'how long a webhook receiver has to answer 2xx', 15, 1, 15),
  webhookMaxEndpoints: integerField('MEDIAGATE_WEBHOOK_MAX_ENDPOINTS', 'webhook endpoints per API key', 'count', 20, 1, 1000),
  webhookPerEndpoint: integerField(
    'MEDIAGATE_WEBHOOK_PER_ENDPOINT',
    'delivery attempts in flight per webhook endpoint, over every process',
    'count',
    2,
    1,
    1000,
  ),
  webhookPerKey: integerField(
    'MEDIAGATE_WEBHOOK_PER_KEY',
    'delivery attempts in flight per API key (all its endpoints), over every process',
    'count',
    4,
    1,
    1000,
  ),
  webhookRetryScheduleMs: retrySchedule,
} as const;

import { secondsField } from '../../config-fields.js';

/** The front doors' settings (modules/frontdoors.ts; docs/guides/openai-clients.md). */
export const FRONT_DOORS_SLICE = {
  syncWaitMs: secondsField(
    'MEDIAGATE_SYNC_WAIT_S',
    'longest `POST /v1/images/generations` (synchronous) holds its request until the task ends, then 504',
    600,
    1,
    86_400,
  ),
} as const;

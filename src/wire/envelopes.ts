import type { ApiError } from '../errors.js';
import { objectSchema, type WireSchema } from './schema.js';

/**
 * The two families of answers (seed "Errors"):
 * - video: the task object, and errors as `{error: {type, code, message, param}}`;
 * - image: `{code, message, data}`, with `data: null` on errors.
 * The family of a request is decided by its path alone, so every error on every path,
 * including unknown routes, uses its family's envelope.
 */
export type Family = 'video' | 'image';

/** The front door's synchronous `POST /v1/images/generations` answers OpenAI's error shape, the video family's. */
const OPENAI_IMAGES = /^\/v1\/images\/generations\/?(?:\?|$)/;

export function familyOf(url: string): Family {
  return url.startsWith('/v1/images') && !OPENAI_IMAGES.test(url) ? 'image' : 'video';
}

/** The one renderer of error envelopes. */
export function errorBody(family: Family, error: ApiError): unknown {
  if (family === 'image') return { code: error.code, message: error.message, data: null };
  return { error: { type: error.type, code: error.code, message: error.message, param: error.param } };
}

/** The OpenAPI schema `VideoError`. */
export const VIDEO_ERROR_SCHEMA: WireSchema = objectSchema({
  error: objectSchema({
    type: { type: 'string', examples: ['invalid_request_error'] },
    code: {
      type: 'string',
      examples: [
        'missing_parameter',
        'invalid_parameter',
        'unsupported_parameter',
        'unsupported_value',
        'task_not_found',
        'task_not_cancellable',
        'idempotency_key_reused',
        'idempotency_key_in_use',
        'webhook_not_found',
        'webhook_delivery_not_found',
        'webhook_limit_reached',
        'budget_exceeded',
        'admin_key_required',
        'key_not_found',
      ],
    },
    message: { type: 'string' },
    param: { type: 'string', description: 'The top-level field at fault; empty when none.' },
  }),
});

/** The OpenAPI schema `ImageError`. */
export const IMAGE_ERROR_SCHEMA: WireSchema = objectSchema({ code: { type: 'string' }, message: { type: 'string' }, data: { type: 'null' } });

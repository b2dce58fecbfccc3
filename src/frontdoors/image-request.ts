import { validationError } from '../errors.js';

export type ResponseFormat = 'b64_json' | 'url';

/**
 * `POST /v1/images/generations` -> the seed's image create body: `size` as it is (`auto`: left
 * out, the model's default), `n` only 1 (checked here, not passed on), `response_format` kept
 * for the answer; every other field by its own name. `known`: the body names one of this
 * deployment's image models; otherwise the body goes on without the front door's fields and
 * validation refuses `model` first (decisions' order of faults).
 */
export function imageRequest(raw: Record<string, unknown>, known: boolean): { body: Record<string, unknown>; responseFormat: ResponseFormat } {
  const { n, response_format: format, size, ...rest } = raw;
  const body: Record<string, unknown> = { ...rest };
  if (!known) return { body, responseFormat: 'b64_json' };
  if (n !== undefined) {
    if (typeof n !== 'number' || !Number.isInteger(n)) throw validationError('invalid_parameter', 'n', `'n' must be an integer.`);
    if (n !== 1) throw validationError('unsupported_value', 'n', `'n' must be 1: one image per request (got ${n}).`);
  }
  let responseFormat: ResponseFormat = 'b64_json';
  if (format !== undefined) {
    if (typeof format !== 'string') throw validationError('invalid_parameter', 'response_format', `'response_format' must be a string.`);
    if (format !== 'b64_json' && format !== 'url') {
      throw validationError('unsupported_value', 'response_format', `'response_format' must be 'b64_json' or 'url'; got '${format.slice(0, 40)}'.`);
    }
    responseFormat = format;
  }
  if (size !== undefined && size !== 'auto') body['size'] = size;
  return { body, responseFormat };
}

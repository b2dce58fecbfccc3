import type { FastifyRequest } from 'fastify';
import { errors } from '../../errors.js';
import { focusCsv } from './focus-export.js';
import type { DepsOf, Handler, OpenApiOperation } from '../route.js';
import { queryValue } from './task-ops.js';

/** The usage module's: the usage rows, in the pricing's currency. */
type UsageDeps = DepsOf<'store', 'currency'>;

/**
 * `GET /v1/admin/usage/export?format=focus&from=YYYY-MM-DD&to=YYYY-MM-DD`: the spend of every
 * key, model and UTC day from `from` through `to` (both included), as a FOCUS CSV streamed from
 * the usage rollup (focus-export.ts). Its amounts are the rollup's, so they add up to what
 * `GET /v1/admin/usage` reports for the same days.
 */

const videoError = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/VideoError' } } } });

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A calendar day given as `YYYY-MM-DD` (2026-02-30 is refused, not rolled over). */
function dayParam(request: FastifyRequest, name: 'from' | 'to'): string {
  const text = queryValue(request, name);
  if (text === undefined) throw errors.invalidQuery(name, `${name} is required: a UTC day as YYYY-MM-DD.`);
  const ms = DAY.test(text) ? Date.parse(`${text}T00:00:00Z`) : NaN;
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text) {
    throw errors.invalidQuery(name, `${name} must be a calendar day as YYYY-MM-DD.`);
  }
  return text;
}

const nextDay = (day: string): string => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

export function exportAdminUsage({ ctx, currency }: UsageDeps): Handler {
  return async (request, reply) => {
    const format = queryValue(request, 'format');
    if (format !== 'focus') throw errors.invalidQuery('format', "format must be 'focus' (the FinOps FOCUS CSV).");
    const from = dayParam(request, 'from');
    const to = dayParam(request, 'to');
    if (to < from) throw errors.invalidQuery('to', 'to must be the same day as from or later.');
    const query = { startDay: from, endDay: nextDay(to) };
    const body = focusCsv((range, after, limit) => ctx.store.usageExportPage(range, after, limit), query, currency);
    return reply
      .header('content-type', 'text/csv; charset=utf-8; header=present')
      .header('content-disposition', `attachment; filename="mediagate-focus-${from}-${to}.csv"`)
      .header('cache-control', 'no-store')
      .send(body);
  };
}

export const exportAdminUsageOperation = (): OpenApiOperation => ({
  operationId: 'exportAdminUsage',
  summary: 'Spend of every key, model and UTC day as a FinOps FOCUS CSV',
  description:
    'One row per key x model x UTC day from `from` through `to` (both included), with the columns FOCUS 1.2 requires and the key in `SubAccountId`/`SubAccountName` and `x_ApiKeyId`/`x_ApiKeyName`. Streamed; its amounts add up to `GET /v1/admin/usage` for the same days.',
  parameters: [
    { name: 'format', in: 'query', required: true, description: 'Only `focus`.', schema: { type: 'string', enum: ['focus'] } },
    {
      name: 'from',
      in: 'query',
      required: true,
      description: 'The first UTC day, `YYYY-MM-DD`.',
      schema: { type: 'string', format: 'date' },
      example: '2026-11-01',
    },
    {
      name: 'to',
      in: 'query',
      required: true,
      description: 'The last UTC day, `YYYY-MM-DD` (included).',
      schema: { type: 'string', format: 'date' },
      example: '2026-11-30',
    },
  ],
  responses: {
    '200': { description: 'The CSV (RFC 4180, CRLF line ends, a header row)', content: { 'text/csv': { schema: { type: 'string' } } } },
    '400': videoError('invalid_parameter on `format` (missing, or not `focus`), `from` or `to` (missing, not a calendar day, `to` before `from`)'),
    '403': videoError('admin_key_required: a client key was sent (param Authorization)'),
    '404': videoError('not_found while no admin key exists'),
  },
});

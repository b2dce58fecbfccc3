/**
 * The OpenAPI side of the task rows of routes/tasks.ts and routes/events.ts: create (its body
 * the `oneOf` of the catalog's request schemas, discriminated by `model`; `Idempotency-Key`),
 * status read and event stream, for both families.
 */
import type { ModelRow } from '../../catalog/index.js';
import { displayName } from '../../catalog/names.js';
import { componentName, requestSchema } from '../docs/openapi.js';
import { requestExample } from '../docs/examples.js';
import type { RouteDocs } from '../route.js';
import { errorAnswer, json, ref, taskIdParam } from './docs-parts.js';

type Kind = 'video' | 'image';
const errorOf = (kind: Kind) => (kind === 'video' ? 'VideoError' : 'ImageError');

/** Whether a model takes any image, video or audio input (an image-to-video model does). */
function takesMedia(row: ModelRow): boolean {
  const properties = Object.values((requestSchema(row)['properties'] ?? {}) as Record<string, Record<string, unknown>>);
  return properties.some((p) => p['format'] === 'media-input' || (p['items'] as Record<string, unknown> | undefined)?.['format'] === 'media-input');
}

/**
 * One request per model that works as it stands: the reference's "try it" sends the selected
 * one. The first (the one preselected) is the first text-only model of the kind, else the first
 * needing nothing but a prompt, else the first model.
 */
function createExamples(rows: readonly ModelRow[]): Record<string, { summary: string; value: Record<string, unknown> }> {
  const promptOnly = rows.filter(
    (row) => !(row.kind === 'video' && row.atLeastOneOf) && (requestSchema(row)['required'] as string[]).every((name) => name === 'model' || name === 'prompt'),
  );
  const first = promptOnly.find((row) => !takesMedia(row)) ?? promptOnly[0] ?? rows[0];
  const ordered = first === undefined ? rows : [first, ...rows.filter((row) => row !== first)];
  return Object.fromEntries(ordered.map((row) => [row.id, { summary: `${row.id}: ${displayName(row)}`, value: requestExample(row) }]));
}

function createBody(kind: Kind, models: readonly ModelRow[]) {
  const rows = models.filter((row) => row.kind === kind);
  // No routed model of this kind: every create is refused (unsupported_value on model).
  if (rows.length === 0) return { required: true, content: json({ type: 'object', description: 'No model of this kind is offered by this deployment.' }) };
  const schema = {
    oneOf: rows.map((row) => ref(componentName(row))),
    discriminator: { propertyName: 'model', mapping: Object.fromEntries(rows.map((row) => [row.id, `#/components/schemas/${componentName(row)}`])) },
  };
  return { required: true, content: { 'application/json': { schema, examples: createExamples(rows) } } };
}

/** The `Idempotency-Key` request header of both creates (http/tasks/idempotency.ts). */
const IDEMPOTENCY_KEY_PARAM = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the create safe to retry for 24 hours per API key: the same key with the same body answers 200 with the original task (current state) and `Idempotent-Replayed: true`, creating nothing; with another body 422 `idempotency_key_reused`; while the first request is still being processed 409 `idempotency_key_in_use`. A request refused by validation does not take the key.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
};

/** The header on a replayed create's 200. */
const REPLAYED_HEADER = {
  'Idempotent-Replayed': { description: '`true` when the answer is a replay of an earlier create with the same Idempotency-Key.', schema: { const: 'true' } },
};

const CREATED = {
  video: { description: 'The task, queued (or, replayed, its current state)', headers: REPLAYED_HEADER, content: json(ref('VideoTask')) },
  image: {
    description: 'Creation envelope (replayed: the status envelope of the original task)',
    headers: REPLAYED_HEADER,
    content: json({ anyOf: [ref('ImageCreated'), ref('ImageStatus')] }),
  },
};

export const createDocs = (kind: Kind): RouteDocs => ({
  operation: ({ models }) => {
    const error = (description: string) => errorAnswer(errorOf(kind), description);
    return {
      operationId: kind === 'video' ? 'createVideo' : 'createImage',
      summary: `Create a${kind === 'video' ? ' video' : 'n image'} generation task`,
      parameters: [IDEMPOTENCY_KEY_PARAM],
      requestBody: createBody(kind, models),
      responses: {
        '200': CREATED[kind],
        '400': error('Validation error'),
        '402': error("The task's maximum cost does not fit what is left of the API key's budget (budget_exceeded)"),
        '409': error('idempotency_key_in_use: the first request with this key is still being processed'),
        '413': error('Body larger than the configured cap'),
        '415': error('Content-Type is not application/json'),
        '422': error('idempotency_key_reused: this key was used with another request body'),
      },
    };
  },
});

export const getTaskDocs = (kind: Kind): RouteDocs => ({
  operation: () => ({
    operationId: kind === 'video' ? 'getVideo' : 'getImage',
    summary: `Get a${kind === 'video' ? ' video' : 'n image'} generation task`,
    parameters: [taskIdParam],
    responses: {
      '200':
        kind === 'video' ? { description: 'The task', content: json(ref('VideoTask')) } : { description: 'Status envelope', content: json(ref('ImageStatus')) },
      '404': errorAnswer(errorOf(kind), 'Unknown task, or a task of another API key'),
    },
  }),
});

/** `GET .../{task_id}/events`; the web console feature-detects it here. */
export const eventsDocs = (kind: Kind): RouteDocs => ({
  operation: () => {
    const poll = kind === 'video' ? 'VideoTask' : 'ImageStatus';
    return {
      operationId: kind === 'video' ? 'streamVideoEvents' : 'streamImageEvents',
      summary: `Follow a ${kind} generation task live (server-sent events)`,
      description:
        `One event \`task\` per change of status or progress; its \`data\` is the task exactly as a status poll returns it (${poll}), ` +
        "its `id` orders the events (the task's version). The first event is the current state; the stream ends after a final state. " +
        'A comment line is sent at least every 15 s. Send `Last-Event-ID` to resume after an event.',
      parameters: [taskIdParam, { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' } }],
      responses: {
        '200': {
          description: 'The event stream',
          content: { 'text/event-stream': { schema: { type: 'string', description: `Events whose data is a ${poll}` } } },
        },
        '404': errorAnswer(errorOf(kind), 'Unknown task, or a task of another API key'),
      },
    };
  },
});

/**
 * The wire presenter (src/wire/task-bodies.ts) against its schemas: every body has the schema's
 * fields in the schema's order, and the status routes' serializer (fast-json-stringify, schema
 * order) writes the same bytes as JSON.stringify (object order: event streams, webhook payloads).
 */
import fastJson from 'fast-json-stringify';
import { describe, expect, it } from 'vitest';
import type { Task } from '../src/store/records.js';
import { serializerSchema } from '../src/wire/schema.js';
import {
  IMAGE_CREATED_SCHEMA,
  IMAGE_STATUS_RESPONSE,
  VIDEO_TASK_RESPONSE,
  imageCreated,
  imageStatusSchema,
  imageTask,
  videoTask,
  videoTaskSchema,
} from '../src/wire/task-bodies.js';

const urlFor = (key: string, completedAt: number): string => `https://media.example/files/${key}?exp=${Math.floor(completedAt / 1000)}&sig=x"y`;

function task(kind: 'video' | 'image', change: Partial<Task> = {}): Task {
  return {
    id: kind === 'video' ? 'vid_0000000000000000000000000000aa' : 'img_0000000000000000000000000000aa',
    kind,
    model: kind === 'video' ? 'vendora/famw-2.7-t2v' : 'vendorc/image-1',
    owner: 'owner',
    status: 'queued',
    progress: null,
    createdAt: 1_764_000_000_123,
    startedAt: null,
    completedAt: null,
    error: null,
    outputs: [],
    attempt: 0,
    version: 1,
    usage: null,
    ...change,
  };
}

/** A task in each state a client can see. */
function states(kind: 'video' | 'image'): Task[] {
  const output = { type: kind, key: `t/${kind}.out`, contentType: 'application/octet-stream' } as const;
  return [
    task(kind),
    task(kind, { status: 'processing', progress: 42, startedAt: 1_764_000_001_999, attempt: 1 }),
    task(kind, {
      status: 'completed',
      progress: 100,
      startedAt: 1_764_000_001_000,
      completedAt: 1_764_000_009_500,
      outputs: [output],
      usage: { seconds: 4, images: 0, cost: 260_001 },
    }),
    task(kind, {
      status: 'failed',
      progress: 10,
      startedAt: 1_764_000_001_000,
      completedAt: 1_764_000_002_000,
      error: { type: 'generation_error', code: 'generation_failed', message: 'The "render" failed.\n', param: '' },
      usage: { seconds: 0, images: 0, cost: 0 },
    }),
    task(kind, { status: 'cancelled', completedAt: 1_764_000_003_000, usage: { seconds: 0, images: 0, cost: 0 } }),
  ];
}

function keysOf(schema: object): string[] {
  return Object.keys((schema as { properties: object }).properties);
}

describe('wire task bodies: presenter and schema agree', () => {
  it('a video task has the schema fields, in its order, in every state', () => {
    for (const t of states('video')) expect(Object.keys(videoTask(t, urlFor, 'EUR'))).toEqual(keysOf(videoTaskSchema()));
  });

  it('an image status envelope and its data have the schema fields, in its order', () => {
    const schema = imageStatusSchema();
    const data = (schema as { properties: { data: object } }).properties.data;
    for (const t of states('image')) {
      const body = imageTask(t, urlFor, 'EUR');
      expect(Object.keys(body)).toEqual(keysOf(schema));
      // `error` only on FAILURE (a failed task's code and param, as video tasks carry them).
      expect(Object.keys(body.data)).toEqual(keysOf(data).filter((key) => key !== 'error' || t.status === 'failed'));
      if (t.status === 'failed') expect(body.data.error).toEqual(t.error);
    }
    expect(Object.keys(imageCreated(task('image')))).toEqual(keysOf(IMAGE_CREATED_SCHEMA));
  });

  it('the serializer writes the bytes JSON.stringify writes', () => {
    const video = fastJson(VIDEO_TASK_RESPONSE);
    const image = fastJson(IMAGE_STATUS_RESPONSE);
    for (const t of states('video')) expect(video(videoTask(t, urlFor, 'EUR'))).toBe(JSON.stringify(videoTask(t, urlFor, 'EUR')));
    for (const t of states('image')) expect(image(imageTask(t, urlFor, 'EUR'))).toBe(JSON.stringify(imageTask(t, urlFor, 'EUR')));
  });
});

describe('wire schemas: the serializer schema keeps only what decides the bytes', () => {
  it('turns const, enum and "null or a shape" into types, and drops required, formats and notes', () => {
    const schema = {
      type: 'object',
      required: ['a'],
      properties: {
        a: { const: 'x' },
        b: { enum: ['p', 'q'] },
        c: { oneOf: [{ type: 'null' }, { type: 'object', required: ['d'], properties: { d: { type: 'integer', minimum: 0 } } }] },
        e: { type: 'array', description: 'n', items: { type: 'string', format: 'uri' } },
      },
    };
    expect(serializerSchema(schema)).toEqual({
      type: 'object',
      properties: {
        a: { type: 'string' },
        b: { type: 'string' },
        c: { type: ['object', 'null'], properties: { d: { type: 'integer' } } },
        e: { type: 'array', items: { type: 'string' } },
      },
    });
  });

  it('refuses a oneOf it cannot write as one nullable shape', () => {
    expect(() => serializerSchema({ oneOf: [{ type: 'string' }, { type: 'integer' }] })).toThrow(/null or one shape/);
  });
});

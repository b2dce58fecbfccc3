import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, errors } from '../errors.js';

/** A file part of a form: its bytes and the type its sender declared. */
export interface FormFile {
  readonly bytes: Buffer;
  readonly type: string;
}

/** A form as read: fields by name (a repeated or `name[]` field is a list), files by field name. */
export interface ReadForm {
  readonly fields: Readonly<Record<string, unknown>>;
  readonly files: Readonly<Record<string, FormFile>>;
}

/** Fields and files one form may carry: a video request has a handful. */
const MAX_FIELDS = 100;
const MAX_FILES = 4;

/**
 * Registers the multipart parser on a route's own scope (the `openai` client sends
 * `POST /videos` as multipart/form-data: node_modules/openai/resources/videos.mjs,
 * `multipartFormRequestOptions`). The parser only admits the request; the handler reads the
 * parts (`readForm`), so every cap and error is ours.
 */
export async function registerMultipart(scope: FastifyInstance): Promise<void> {
  await scope.register(multipart, { throwFileSizeLimit: true });
}

const isMultipart = (request: FastifyRequest): boolean => /^multipart\/form-data\s*(;|$)/i.test(request.headers['content-type'] ?? '');
const isJson = (request: FastifyRequest): boolean => /^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '');

/** The request's content type, as the front doors take it: a form, JSON, or a 415. */
export function bodyKind(request: FastifyRequest, allowForm: boolean): 'form' | 'json' {
  if (allowForm && isMultipart(request)) return 'form';
  if (isJson(request)) return 'json';
  const got = request.headers['content-type'];
  throw new ApiError(
    415,
    'invalid_parameter',
    'Content-Type',
    `Content-Type must be ${allowForm ? 'multipart/form-data or ' : ''}application/json${got ? `; got '${got.slice(0, 100)}'` : ' and is missing'}.`,
  );
}

/**
 * Reads a multipart body whole, within the body cap (MEDIAGATE_BODY_LIMIT_BYTES counts every
 * field and file together, as it counts a JSON body). Names in the `openai` client's bracket
 * form (node_modules/openai/internal/uploads.mjs, `addFormValue`: an object's keys as
 * `name[key]`, an array's items as `name[]`) are read back into objects and lists.
 */
export async function readForm(request: FastifyRequest, bodyLimit: number): Promise<ReadForm & { bytes: number }> {
  const fields: Record<string, unknown> = {};
  const files: Record<string, FormFile> = {};
  let bytes = 0;
  const count = (more: number): void => {
    bytes += more;
    if (bytes > bodyLimit) throw errors.bodyTooLarge(bodyLimit);
  };
  try {
    const parts = request.parts({ limits: { fileSize: bodyLimit, fieldSize: bodyLimit, fields: MAX_FIELDS, files: MAX_FILES, parts: MAX_FIELDS + MAX_FILES } });
    for await (const part of parts) {
      count(Buffer.byteLength(part.fieldname));
      if (part.type === 'file') {
        const content = await part.toBuffer();
        count(content.length);
        if (part.fieldname in files || part.fieldname in fields) throw repeated(part.fieldname);
        files[part.fieldname] = { bytes: content, type: part.mimetype };
        continue;
      }
      if (part.valueTruncated) throw errors.bodyTooLarge(bodyLimit);
      const value = typeof part.value === 'string' ? part.value : String(part.value);
      count(Buffer.byteLength(value));
      setField(fields, part.fieldname, value);
    }
  } catch (error) {
    throw formError(error, bodyLimit);
  }
  return { fields, files, bytes };
}

function repeated(name: string): ApiError {
  return new ApiError(400, 'invalid_parameter', topName(name), `The form field '${name.slice(0, 100)}' is given more than once.`);
}

/** The top-level name of a bracket name: `input_reference[image_url]` -> `input_reference`. */
export function topName(name: string): string {
  const bracket = name.indexOf('[');
  return bracket > 0 ? name.slice(0, bracket) : name;
}

const SAFE_KEY = (key: string): boolean => key !== '__proto__' && key !== 'constructor' && key !== 'prototype';

/** `name`, `name[]` (a list) and `name[key]` (an object's field), as the openai client writes them. */
function setField(fields: Record<string, unknown>, name: string, value: string): void {
  const match = /^([^[\]]+)(?:\[([^[\]]*)\])?$/.exec(name);
  if (!match || !SAFE_KEY(match[1] ?? '') || !SAFE_KEY(match[2] ?? '')) {
    throw new ApiError(400, 'invalid_parameter', topName(name), `The form field name '${name.slice(0, 100)}' is not understood.`);
  }
  const top = match[1] ?? '';
  const key = match[2];
  const current = fields[top];
  if (key === undefined) {
    if (current !== undefined) throw repeated(name);
    fields[top] = value;
  } else if (key === '') {
    if (current !== undefined && !Array.isArray(current)) throw repeated(name);
    fields[top] = [...((current as unknown[] | undefined) ?? []), value];
  } else {
    if (current !== undefined && (typeof current !== 'object' || current === null || Array.isArray(current))) throw repeated(name);
    const object = (current ?? {}) as Record<string, unknown>;
    if (key in object) throw repeated(name);
    object[key] = value;
    fields[top] = object;
  }
}

/** What reading a form can meet: our own refusals, the parser's limits, a broken body. */
function formError(error: unknown, bodyLimit: number): ApiError {
  if (error instanceof ApiError) return error;
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  if (code === 'FST_REQ_FILE_TOO_LARGE') return errors.bodyTooLarge(bodyLimit);
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT') {
    return new ApiError(413, 'invalid_parameter', 'body', `A form may carry at most ${MAX_FIELDS} fields and ${MAX_FILES} files.`);
  }
  const detail = error instanceof Error ? error.message : String(error);
  return new ApiError(400, 'invalid_parameter', 'body', `The multipart/form-data body could not be read: ${detail.slice(0, 200)}`);
}

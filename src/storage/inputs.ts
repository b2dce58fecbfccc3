import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { mkdir, open as openFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { deletePrefix, folderAges, type BlobStore } from './blobs.js';
import type { StoredFile } from './storage.js';

/**
 * Media inputs sent by value (Base64 data URLs) live in the media store (blobs.ts) under
 * `inputs/<task id>/` (on disk, `<dataDir>/inputs/<task id>/`), not in the task row: a 32 MiB
 * data URL written into the row, and read back at every claim, ran through synchronous SQLite
 * on the event loop, stalling every other request for seconds. The row carries a reference
 * instead, `mediagate-input:<name>;<mime>;<bytes>`. References appear only where the catalog
 * accepted a media value, and a client's media value is an `https://` URL or a `data:` URL, so
 * a reference can never be mistaken for one (nor a client string for a reference: the prompt
 * and other text fields are never read as one).
 */
export const INPUT_REF_PREFIX = 'mediagate-input:';

/** Published inputs' file extensions, by mime, and back: the type an upstream is served. */
const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'video/mp4': 'mp4',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
};
const TYPES: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(EXTENSIONS).map(([mime, ext]) => [ext, mime]));

/** The request fields that hold media (a string, or an array of strings). */
export const MEDIA_FIELDS: ReadonlySet<string> = new Set(['image', 'end_image', 'images', 'videos', 'audios', 'audio']);

export interface InputRef {
  /** File name inside the task's folder: `<field>` or `<field>-<index>`. */
  readonly name: string;
  readonly mime: string;
  readonly bytes: number;
}

const NAME = /^[a-z_]{1,32}(-\d{1,4})?(\.[a-z0-9]{1,8})?$/;
const TASK_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** A folder `publish` made. */
const PUBLISHED_FOLDER = /^pub_[A-Za-z0-9_-]{22}$/;
/**
 * A task's marker of one folder published for it, `.published-<folder>` in the task's folder: an
 * empty object per folder (an object store cannot append to a list). A leading dot: never a
 * servable NAME.
 */
const PUBLISHED_MARKER = '.published-';

/**
 * The task an upstream submission is made for, while the adapter runs (the scheduler sets it):
 * what the adapter publishes for it is deleted with the task's inputs.
 */
export const publishingTask = new AsyncLocalStorage<string>();
const MIME = /^[a-z0-9.+-]{0,64}\/?[a-z0-9.+-]{0,64}$/;

export function formatInputRef(ref: InputRef): string {
  return `${INPUT_REF_PREFIX}${ref.name};${ref.mime};${ref.bytes}`;
}

/** The reference a value holds, or undefined for any other value (an https URL, a data URL). */
export function parseInputRef(value: unknown): InputRef | undefined {
  if (typeof value !== 'string' || !value.startsWith(INPUT_REF_PREFIX)) return undefined;
  const [name = '', mime = '', bytes = ''] = value.slice(INPUT_REF_PREFIX.length).split(';');
  if (!NAME.test(name) || !MIME.test(mime) || !/^\d{1,12}$/.test(bytes)) return undefined;
  return { name, mime, bytes: Number(bytes) };
}

/** The signed key of a published input: its own namespace, so no output URL opens an input or the reverse. */
export function inputKey(folder: string, name: string): string {
  return `inputs/${folder}/${name}`;
}

/** Decoded size of a Base64 data URL's payload, without decoding it. */
function decodedSize(value: string, payloadStart: number): number {
  const length = value.length - payloadStart;
  const pad = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  return Math.floor(((length - pad) * 3) / 4);
}

/** The mime and payload offset of a data URL the catalog accepted (`data:<mime>[;k=v]*;base64,`). */
function dataUrlParts(value: string): { mime: string; payloadStart: number } | undefined {
  if (!/^data:/i.test(value)) return undefined;
  const comma = value.indexOf(',', 0);
  if (comma === -1 || comma > 512) return undefined;
  const header = value.slice(5, comma);
  if (!/;base64$/i.test(header)) return undefined;
  const mime = (header.split(';')[0] ?? '').toLowerCase();
  return { mime: MIME.test(mime) ? mime : 'application/octet-stream', payloadStart: comma + 1 };
}

/** MEDIA_FIELDS as an array: a create walks it twice, and a Set's iterator allocates. */
const MEDIA_FIELD_LIST: readonly string[] = [...MEDIA_FIELDS];

/**
 * Whether `value` could be a data URL: its first character is a `d` or `D`. Most media values
 * are https URLs, and most bodies have none at all: a create looks no further for those.
 */
function mayBeDataUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const first = value.charCodeAt(0);
  return first === 0x64 || first === 0x44;
}

interface DataUrlValue {
  readonly field: string;
  readonly index: number | undefined;
  readonly value: string;
}

const NO_VALUES: readonly DataUrlValue[] = [];

/** Each data-URL media value of `params`, with the file name it is stored under. */
function dataUrlValues(params: Readonly<Record<string, unknown>>): readonly DataUrlValue[] {
  let found: DataUrlValue[] | undefined;
  for (const field of MEDIA_FIELD_LIST) {
    const value = params[field];
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index += 1) {
        const item: unknown = value[index];
        if (mayBeDataUrl(item) && dataUrlParts(item)) (found ??= []).push({ field, index, value: item });
      }
    } else if (mayBeDataUrl(value) && dataUrlParts(value)) (found ??= []).push({ field, index: undefined, value });
  }
  return found ?? NO_VALUES;
}

/** Whether `params` holds a data-URL media value: whether `InputStore.store` has anything to store. */
export function hasDataUrlValues(params: Readonly<Record<string, unknown>>): boolean {
  return dataUrlValues(params).length > 0;
}

/** Decoded bytes of the data-URL media values of `params` (what storing them would take). */
export function dataUrlInputBytes(params: Readonly<Record<string, unknown>>): number {
  let total = 0;
  for (const { value } of dataUrlValues(params)) total += decodedSize(value, dataUrlParts(value)?.payloadStart ?? value.length);
  return total;
}

/** Bytes of the stored inputs a task's params reference. */
export function referencedInputBytes(params: Readonly<Record<string, unknown>>): number {
  let total = 0;
  for (const field of MEDIA_FIELDS) {
    const value = params[field];
    for (const item of Array.isArray(value) ? (value as unknown[]) : [value]) total += parseInputRef(item)?.bytes ?? 0;
  }
  return total;
}

/** Base64 characters decoded per step: a multiple of 4, so each slice decodes on its own. */
const DECODE_CHARS = 4 * 1024 * 1024;

/**
 * Decodes the Base64 payload of `value` from `start` into a new file, a slice at a time with
 * the event loop free between slices (the write's await), instead of one decode of the whole.
 */
async function writeDecoded(path: string, value: string, start: number): Promise<number> {
  const file = await openFile(path, 'w');
  let size = 0;
  try {
    for (let at = start; at < value.length; at += DECODE_CHARS) {
      const bytes = Buffer.from(value.slice(at, Math.min(value.length, at + DECODE_CHARS)), 'base64');
      await file.write(bytes);
      size += bytes.length;
    }
  } finally {
    await file.close();
  }
  return size;
}

export interface InputStoreOptions {
  readonly blobs: BlobStore;
  /** A local directory for decoding a data URL into a file before it is put in the store. */
  readonly scratch: string;
  /** The folder of inputs in the store. Default `inputs/`. */
  readonly folder?: string;
}

/** Stored inputs of tasks, by task id, in the media store. Works across processes sharing the store. */
export class InputStore {
  readonly blobs: BlobStore;
  private readonly scratch: string;
  private readonly folder: string;

  constructor(options: InputStoreOptions) {
    this.blobs = options.blobs;
    this.scratch = options.scratch;
    this.folder = options.folder ?? 'inputs/';
  }

  private key(folder: string, name?: string): string {
    if (!TASK_ID.test(folder)) throw new Error(`unsafe task id ${folder}`);
    return name === undefined ? `${this.folder}${folder}/` : `${this.folder}${folder}/${name}`;
  }

  /**
   * Puts each data-URL media value of `params` in the task's folder and returns the params
   * with references in their place, and the bytes stored. Base64 is decoded natively a slice at
   * a time into a scratch file with async I/O, then the file moves into the store: the event
   * loop is not held, nor memory taken, for the size of the input.
   */
  async store(taskId: string, params: Readonly<Record<string, unknown>>): Promise<{ params: Readonly<Record<string, unknown>>; bytes: number }> {
    const values = dataUrlValues(params);
    // Nothing to store: the params as they are (no copy), so nothing is discarded after a refusal either.
    if (values.length === 0) return { params, bytes: 0 };
    this.key(taskId); // throws for an unsafe id before anything is written
    await mkdir(this.scratch, { recursive: true });
    const out: Record<string, unknown> = { ...params };
    let total = 0;
    for (const { field, index, value } of values) {
      const parts = dataUrlParts(value);
      if (!parts) continue;
      const name = index === undefined ? field : `${field}-${index}`;
      const scratch = join(this.scratch, `input-${randomBytes(9).toString('base64url')}`);
      try {
        const size = await writeDecoded(scratch, value, parts.payloadStart);
        await this.blobs.putFile(this.key(taskId, name), scratch, parts.mime);
        total += size;
        const ref = formatInputRef({ name, mime: parts.mime, bytes: size });
        if (index === undefined) out[field] = ref;
        else {
          const list = [...(out[field] as unknown[])];
          list[index] = ref;
          out[field] = list;
        }
      } finally {
        await rm(scratch, { force: true });
      }
    }
    return { params: out, bytes: total };
  }

  async read(taskId: string, ref: InputRef): Promise<Buffer> {
    const bytes = await this.blobs.read(this.key(taskId, ref.name));
    if (bytes === undefined) throw new Error(`stored input ${ref.name} of task ${taskId} is gone`);
    return bytes;
  }

  /**
   * The params with each reference turned back into a data URL, as the engines and upstream
   * adapters take media values. A missing file (the task was cancelled meanwhile) throws.
   */
  async resolve(taskId: string, params: Readonly<Record<string, unknown>>): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = { ...params };
    for (const field of MEDIA_FIELDS) {
      const value = params[field];
      if (Array.isArray(value)) {
        if (!value.some((item) => parseInputRef(item))) continue;
        out[field] = await Promise.all(value.map((item: unknown) => this.resolveOne(taskId, item)));
      } else if (parseInputRef(value)) out[field] = await this.resolveOne(taskId, value);
    }
    return out;
  }

  private async resolveOne(taskId: string, value: unknown): Promise<unknown> {
    const ref = parseInputRef(value);
    if (!ref) return value;
    const bytes = await this.read(taskId, ref);
    return `data:${ref.mime};base64,${bytes.toString('base64')}`;
  }

  /** The bytes of one of the task's references; undefined for any other value (RenderJob.readInput). */
  reader(taskId: string): (value: string) => Promise<Buffer | undefined> {
    return async (value) => {
      const ref = parseInputRef(value);
      return ref === undefined ? undefined : this.read(taskId, ref);
    };
  }

  /** A stored input as a servable file (published URLs), or undefined. */
  async open(taskId: string, name: string): Promise<StoredFile | undefined> {
    if (!TASK_ID.test(taskId) || !NAME.test(name)) return undefined;
    const blob = await this.blobs.open(this.key(taskId, name));
    if (!blob) return undefined;
    const contentType = TYPES[name.split('.')[1] ?? ''] ?? 'application/octet-stream';
    return { size: blob.size, mtimeMs: blob.mtimeMs, contentType, stream: (range) => blob.stream(range) };
  }

  /**
   * Stores bytes an upstream is to fetch (ChannelMedia.publish) in a folder of their own,
   * `pub_<random>` (its URL names no task). With `taskId` (the task being submitted,
   * `publishingTask`), the folder is listed in the task's inputs and deleted with them when the
   * task ends; the sweep of inputs deletes any left (a task that ended while it was being
   * published, a process stopped) once older than its URL's lifetime. Returns the folder and
   * file name.
   */
  async publish(bytes: Buffer, mime: string, taskId?: string): Promise<{ folder: string; name: string }> {
    const folder = `pub_${randomBytes(16).toString('base64url')}`;
    const ext = EXTENSIONS[mime];
    const name = ext === undefined ? 'input' : `input.${ext}`;
    // The marker first: a crash between the two leaves a marker of nothing, never a copy no task lists.
    if (taskId !== undefined && TASK_ID.test(taskId))
      await this.blobs.putBytes(this.key(taskId, PUBLISHED_MARKER + folder), Buffer.alloc(0), 'application/octet-stream');
    await this.blobs.putBytes(this.key(folder, name), bytes, mime);
    return { folder, name };
  }

  /** Deletes a task's inputs and the copies published for it (it reached a final state, or was never inserted). */
  async discard(taskId: string): Promise<void> {
    if (!TASK_ID.test(taskId)) return;
    const prefix = this.key(taskId);
    const markers: string[] = [];
    for await (const entry of this.blobs.list(prefix)) {
      const name = entry.key.slice(prefix.length);
      if (name.startsWith(PUBLISHED_MARKER)) markers.push(name.slice(PUBLISHED_MARKER.length));
    }
    for (const folder of markers) if (PUBLISHED_FOLDER.test(folder)) await deletePrefix(this.blobs, this.key(folder));
    await deletePrefix(this.blobs, prefix);
  }

  /** Task ids that have an inputs folder last modified before `olderThanMs`. */
  async folders(olderThanMs: number): Promise<string[]> {
    const found: string[] = [];
    for (const [folder, newest] of await folderAges(this.blobs, this.folder)) {
      if (TASK_ID.test(folder) && newest < olderThanMs) found.push(folder);
    }
    return found;
  }
}

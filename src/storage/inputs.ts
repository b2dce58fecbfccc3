import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, open as openFile, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openStoredFile } from './local.js';
import type { StoredFile } from './storage.js';

/**
 * Media inputs sent by value (Base64 data URLs) live on disk under `<dataDir>/inputs/<task id>/`,
 * not in the task row: a 32 MiB data URL written into the row, and read back at every claim,
 * ran through synchronous SQLite on the event loop, stalling every other request for seconds. The row carries a reference
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
/** The task's list of its published folders; a leading dot: never a servable NAME. */
const PUBLISHED_LIST = '.published';

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

/** Each data-URL media value of `params`, with the file name it is stored under. */
function dataUrlValues(params: Readonly<Record<string, unknown>>): { field: string; index: number | undefined; value: string }[] {
  const found: { field: string; index: number | undefined; value: string }[] = [];
  for (const field of MEDIA_FIELDS) {
    const value = params[field];
    if (typeof value === 'string') {
      if (dataUrlParts(value)) found.push({ field, index: undefined, value });
    } else if (Array.isArray(value)) {
      value.forEach((item: unknown, index) => {
        if (typeof item === 'string' && dataUrlParts(item)) found.push({ field, index, value: item });
      });
    }
  }
  return found;
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

/** Stored inputs of tasks, by task id. Works across processes sharing the directory. */
export class InputStore {
  constructor(readonly root: string) {}

  private dir(taskId: string): string {
    if (!TASK_ID.test(taskId)) throw new Error(`unsafe task id ${taskId}`);
    return join(this.root, taskId);
  }

  /**
   * Writes each data-URL media value of `params` to the task's folder and returns the params
   * with references in their place, and the bytes written. Base64 is decoded natively and the
   * files are written with async I/O, so the event loop is not held for the size of the input.
   */
  async store(taskId: string, params: Readonly<Record<string, unknown>>): Promise<{ params: Record<string, unknown>; bytes: number }> {
    const values = dataUrlValues(params);
    if (values.length === 0) return { params: { ...params }, bytes: 0 };
    const dir = this.dir(taskId);
    await mkdir(dir, { recursive: true });
    const out: Record<string, unknown> = { ...params };
    let total = 0;
    for (const { field, index, value } of values) {
      const parts = dataUrlParts(value);
      if (!parts) continue;
      const name = index === undefined ? field : `${field}-${index}`;
      const size = await writeDecoded(join(dir, name), value, parts.payloadStart);
      total += size;
      const ref = formatInputRef({ name, mime: parts.mime, bytes: size });
      if (index === undefined) out[field] = ref;
      else {
        const list = [...(out[field] as unknown[])];
        list[index] = ref;
        out[field] = list;
      }
    }
    return { params: out, bytes: total };
  }

  async read(taskId: string, ref: InputRef): Promise<Buffer> {
    return readFile(join(this.dir(taskId), ref.name));
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
    return openStoredFile(join(this.root, taskId, name), TYPES[name.split('.')[1] ?? ''] ?? 'application/octet-stream');
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
    if (taskId !== undefined && TASK_ID.test(taskId)) {
      await mkdir(this.dir(taskId), { recursive: true });
      await appendFile(join(this.dir(taskId), PUBLISHED_LIST), `${folder}\n`);
    }
    await mkdir(join(this.root, folder), { recursive: true });
    await writeFile(join(this.root, folder, name), bytes);
    return { folder, name };
  }

  /** Deletes a task's inputs and the copies published for it (it reached a final state, or was never inserted). */
  async discard(taskId: string): Promise<void> {
    if (!TASK_ID.test(taskId)) return;
    const listed = await readFile(join(this.dir(taskId), PUBLISHED_LIST), 'utf8').catch(() => '');
    for (const folder of listed.split('\n')) {
      if (PUBLISHED_FOLDER.test(folder)) await rm(join(this.root, folder), { recursive: true, force: true });
    }
    await rm(join(this.root, taskId), { recursive: true, force: true });
  }

  /** Task ids that have an inputs folder last modified before `olderThanMs`. */
  async folders(olderThanMs: number): Promise<string[]> {
    const found: string[] = [];
    for (const entry of await readdir(this.root).catch(() => [] as string[])) {
      if (!TASK_ID.test(entry)) continue;
      const info = await stat(join(this.root, entry)).catch(() => undefined);
      if (info && info.mtimeMs < olderThanMs) found.push(entry);
    }
    return found;
  }
}

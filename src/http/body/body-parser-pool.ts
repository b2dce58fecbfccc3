import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ParseRequest } from './body-parse-worker.js';
import { parseJsonBody, type JsonBodyResult } from './json-body.js';
import type { JsonLimits } from './json-limits.js';

/**
 * Bodies from this size on are parsed in a worker thread. Below it a parse costs the event loop
 * about as little as handing the bytes over and the answer back would (~0.3 ms); a 32 MiB data
 * URL create held the loop for 0.3-1 s (JSON.parse, then validation's Base64 scan of the data
 * URL, which the worker does too).
 */
export const OFFLOAD_BYTES = 1024 * 1024;

/** Worker threads at most: each parses one body at a time, the next ones wait their turn. */
const MAX_WORKERS = 2;

interface Pending {
  readonly request: ParseRequest;
  readonly transfer: ArrayBuffer[];
  resolve(result: JsonBodyResult): void;
}

interface Slot {
  readonly worker: Worker;
  current: Pending | undefined;
}

/**
 * A small pool of worker threads that parse large JSON bodies (json-body.ts), so that
 * `/healthz`, polls and every other request are answered while a 32 MiB body is parsed. Started
 * on the first large body; the threads do not hold the process open. A thread that fails takes
 * its body back to the event loop (parsed there, the answer the same) and is replaced on the next.
 */
export class BodyParserPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 0;
  private closed = false;

  /** The result for `bytes`; their memory is handed to the worker (do not read them after). */
  parse(bytes: Buffer, limits: JsonLimits | undefined): Promise<JsonBodyResult> {
    if (this.closed) return Promise.resolve(parseJsonBody(bytes, limits, false));
    // A Buffer that owns its whole ArrayBuffer is moved, not copied; a slice of a shared one is copied.
    const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
    const view = owned ? new Uint8Array(bytes.buffer, 0, bytes.byteLength) : new Uint8Array(bytes);
    return new Promise((resolve) => {
      this.queue.push({ request: { id: (this.nextId += 1), bytes: view, limits }, transfer: [view.buffer], resolve });
      this.pump();
    });
  }

  /** Ends the threads (server close); bodies still waiting are parsed on the event loop. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.resolve(parseJsonBody(pending.request.bytes, pending.request.limits, false));
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const slot = this.slots.find((candidate) => candidate.current === undefined) ?? this.spawn();
      if (slot === undefined) return;
      const pending = this.queue.shift();
      if (pending === undefined) return;
      slot.current = pending;
      slot.worker.postMessage(pending.request, pending.transfer);
    }
  }

  private spawn(): Slot | undefined {
    if (this.slots.length >= MAX_WORKERS) return undefined;
    const worker = startWorker();
    worker.unref();
    const slot: Slot = { worker, current: undefined };
    worker.on('message', (message: { id: number; result: JsonBodyResult }) => {
      const pending = slot.current;
      if (pending === undefined || pending.request.id !== message.id) return;
      slot.current = undefined;
      pending.resolve(message.result);
      this.pump();
    });
    const lost = (): void => {
      const index = this.slots.indexOf(slot);
      if (index !== -1) this.slots.splice(index, 1);
      const pending = slot.current;
      slot.current = undefined;
      // The bytes went with the thread only if it had taken them; a detached buffer reads as empty.
      if (pending) pending.resolve(pending.request.bytes.byteLength > 0 ? parseJsonBody(pending.request.bytes, pending.request.limits, false) : LOST);
      if (!this.closed) this.pump();
    };
    worker.on('error', lost);
    worker.on('exit', lost);
    this.slots.push(slot);
    return slot;
  }
}

/**
 * The parser thread, from dist/ as built; from the TypeScript sources (the specs, `npm run dev`)
 * through tsx's loader, registered in the thread before the worker module is imported (`--import
 * tsx` in a thread's execArgv does not reach its module loads on Node 20).
 */
function startWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./body-parse-worker.js', import.meta.url));
  const tsx = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const source = new URL('./body-parse-worker.ts', import.meta.url).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(source)}); });`, { eval: true });
}

/** A body lost with its thread: answered (a 500), never left hanging. */
const LOST: JsonBodyResult = { ok: false, problem: 'lost' };

/**
 * A parser of `text/event-stream` as the WHATWG HTML standard defines it ("9.2 Server-sent
 * events", event stream interpretation): lines end in CRLF, LF or CR (a CRLF split across chunks
 * included); a leading BOM is dropped; `:` starts a comment; fields `event`, `data` (several lines
 * joined by `\n`), `id` (ignored when it holds NUL; it persists across events) and `retry` (digits
 * only); a blank line dispatches; an event with no data is not dispatched; an unfinished event at
 * the end of the stream is discarded. No dependency: browsers' EventSource cannot send an
 * Authorization header, so the SDK reads the stream over fetch itself.
 */

export interface ServerSentEvent {
  /** The `event` field; `message` when none was sent. */
  readonly event: string;
  readonly data: string;
  /** The last event id seen on the stream so far (the standard's "last event ID buffer"). */
  readonly id: string;
}

export interface SSEHandlers {
  readonly onEvent: (event: ServerSentEvent) => void;
  /** A `retry:` field: the reconnection delay the server asks for, in milliseconds. */
  readonly onRetry?: (ms: number) => void;
  /** A comment line (heartbeats); its text without the colon. */
  readonly onComment?: (text: string) => void;
}

export class SSEParser {
  readonly #handlers: SSEHandlers;
  #buffer = '';
  #sawFirstChunk = false;
  /** The previous chunk ended in CR: a LF at the start of the next one belongs to that line end. */
  #pendingCR = false;
  #data: string[] = [];
  #event = '';
  #lastEventId = '';

  constructor(handlers: SSEHandlers, lastEventId = '') {
    this.#handlers = handlers;
    this.#lastEventId = lastEventId;
  }

  get lastEventId(): string {
    return this.#lastEventId;
  }

  /** Feeds decoded text; complete lines are interpreted at once. */
  feed(chunk: string): void {
    let text = chunk;
    if (!this.#sawFirstChunk && text !== '') {
      this.#sawFirstChunk = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.#pendingCR && text.startsWith('\n')) text = text.slice(1);
    this.#pendingCR = false;
    this.#buffer += text;
    let start = 0;
    for (let index = 0; index < this.#buffer.length; index++) {
      const char = this.#buffer.charCodeAt(index);
      if (char !== 10 && char !== 13) continue;
      this.#line(this.#buffer.slice(start, index));
      if (char === 13) {
        if (index + 1 < this.#buffer.length) {
          if (this.#buffer.charCodeAt(index + 1) === 10) index++;
        } else {
          this.#pendingCR = true;
        }
      }
      start = index + 1;
    }
    this.#buffer = this.#buffer.slice(start);
  }

  /** The stream ended: an event without its blank line is discarded, per the standard. */
  end(): void {
    this.#buffer = '';
    this.#data = [];
    this.#event = '';
  }

  #line(line: string): void {
    if (line === '') {
      this.#dispatch();
      return;
    }
    if (line.startsWith(':')) {
      this.#handlers.onComment?.(line.slice(1).replace(/^ /, ''));
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.#event = value;
        break;
      case 'data':
        this.#data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.#lastEventId = value;
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.#handlers.onRetry?.(Number(value));
        break;
      default:
        // Unknown fields are ignored.
        break;
    }
  }

  #dispatch(): void {
    const data = this.#data;
    const event = this.#event;
    this.#data = [];
    this.#event = '';
    if (data.length === 0) return;
    this.#handlers.onEvent({ event: event === '' ? 'message' : event, data: data.join('\n'), id: this.#lastEventId });
  }
}

/** Decodes a byte stream as UTF-8 and yields its events; `onRetry`/`onComment` see those lines. */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
  options: { readonly lastEventId?: string; readonly onRetry?: (ms: number) => void; readonly onComment?: (text: string) => void } = {},
): AsyncGenerator<ServerSentEvent, void, undefined> {
  const queue: ServerSentEvent[] = [];
  const parser = new SSEParser(
    {
      onEvent: (event) => queue.push(event),
      ...(options.onRetry ? { onRetry: options.onRetry } : {}),
      ...(options.onComment ? { onComment: options.onComment } : {}),
    },
    options.lastEventId ?? '',
  );
  const decoder = new TextDecoder('utf-8');
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      while (queue.length > 0) {
        const event = queue.shift();
        if (event) yield event;
      }
    }
    parser.feed(decoder.decode());
    parser.end();
    while (queue.length > 0) {
      const event = queue.shift();
      if (event) yield event;
    }
  } finally {
    // Ends the connection when the consumer stops early (break, return, an error).
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * The SDK's two protocol pieces that need no server: the `text/event-stream` parser (the WHATWG
 * interpretation rules) and Standard Webhooks verification, checked against signatures computed
 * here with node:crypto and against the Standard Webhooks reference vector.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  Mediagate,
  SSEParser,
  WebhookVerificationError,
  readServerSentEvents,
  unwrapWebhook,
  verifyWebhook,
  type ServerSentEvent,
} from '../src/client/index.js';

function parse(chunks: readonly string[], lastEventId = ''): { events: ServerSentEvent[]; retries: number[]; comments: string[] } {
  const events: ServerSentEvent[] = [];
  const retries: number[] = [];
  const comments: string[] = [];
  const parser = new SSEParser(
    { onEvent: (event) => events.push(event), onRetry: (ms) => retries.push(ms), onComment: (text) => comments.push(text) },
    lastEventId,
  );
  for (const chunk of chunks) parser.feed(chunk);
  parser.end();
  return { events, retries, comments };
}

describe('SSE parser', () => {
  it('reads event, id and multi-line data, with LF, CRLF and CR line ends', () => {
    for (const end of ['\n', '\r\n', '\r']) {
      const text = ['event: task', 'id: 7', 'data: {"a":', 'data: 1}', '', 'data: plain', '', ''].join(end);
      expect(parse([text]).events).toEqual([
        { event: 'task', id: '7', data: '{"a":\n1}' },
        { event: 'message', id: '7', data: 'plain' },
      ]);
    }
  });

  it('joins lines split across chunks anywhere, a CRLF split between chunks included', () => {
    const text = 'event: task\r\nid: 1\r\ndata: hello\r\n\r\ndata: world\r\n\r\n';
    const expected = parse([text]).events;
    expect(expected).toHaveLength(2);
    for (let cut = 1; cut < text.length; cut++) {
      expect(parse([text.slice(0, cut), text.slice(cut)]).events).toEqual(expected);
    }
    expect(parse([...text]).events).toEqual(expected);
  });

  it('drops a leading BOM, reports comments and retry, ignores unknown fields and a bad retry', () => {
    const { events, retries, comments } = parse(['\uFEFF: hi\n', 'retry: 250\nretry: 1s\nfoo: bar\ndata\n\n']);
    expect(comments).toEqual(['hi']);
    expect(retries).toEqual([250]);
    expect(events).toEqual([{ event: 'message', id: '', data: '' }]);
  });

  it('takes the value after one optional space, and a field with no colon has an empty value', () => {
    expect(parse(['data:  two spaces\n\n', 'data:none\n\n']).events.map((event) => event.data)).toEqual([' two spaces', 'none']);
  });

  it('does not dispatch an event without data; the id persists; an id with NUL is ignored', () => {
    const { events } = parse(['id: 5\nevent: task\n\n', 'data: a\n\n', 'id: x\0y\ndata: b\n\n', 'id\ndata: c\n\n'], '1');
    expect(events).toEqual([
      { event: 'message', id: '5', data: 'a' },
      { event: 'message', id: '5', data: 'b' },
      { event: 'message', id: '', data: 'c' },
    ]);
  });

  it('discards an event left unfinished at the end of the stream', () => {
    expect(parse(['data: done\n\ndata: cut']).events.map((event) => event.data)).toEqual(['done']);
    expect(parse(['data: cut\n']).events).toEqual([]);
  });

  it('decodes UTF-8 split inside a character across byte chunks', async () => {
    const bytes = new TextEncoder().encode('data: é✓\n\n');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const byte of bytes) controller.enqueue(new Uint8Array([byte]));
        controller.close();
      },
    });
    const events: ServerSentEvent[] = [];
    for await (const event of readServerSentEvents(stream)) events.push(event);
    expect(events.map((event) => event.data)).toEqual(['é✓']);
  });
});

/** The Standard Webhooks reference vector (standard-webhooks/standard-webhooks, the libraries' tests). */
const REFERENCE = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

const SECRET = `whsec_${Buffer.from('a test secret of 24 bytes').toString('base64')}`;

/** Signs as the service does, independently of the SDK. */
function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

function delivery(overrides: { body?: string; timestamp?: number; signature?: string } = {}): { body: string; headers: Record<string, string> } {
  const timestamp = overrides.timestamp ?? Math.floor(Date.now() / 1000);
  const body = JSON.stringify({ type: 'video.completed', timestamp, data: { id: 'vid_1', object: 'video.generation', status: 'completed' } });
  return {
    body: overrides.body ?? body,
    headers: {
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': overrides.signature ?? sign(SECRET, 'evt_1', timestamp, body),
    },
  };
}

function code(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.code;
    throw error;
  }
  return 'verified';
}

describe('webhook verification', () => {
  it('accepts the Standard Webhooks reference vector', () => {
    const headers = { 'webhook-id': REFERENCE.id, 'webhook-timestamp': String(REFERENCE.timestamp), 'webhook-signature': REFERENCE.signature };
    expect(code(() => verifyWebhook(REFERENCE.body, headers, REFERENCE.secret, { now: REFERENCE.timestamp }))).toBe('verified');
    expect(code(() => verifyWebhook(REFERENCE.body, headers, REFERENCE.secret, { now: REFERENCE.timestamp + 301 }))).toBe('timestamp_too_old');
  });

  it('accepts a delivery signed with node:crypto, with Headers or Node header objects, and unwraps it', () => {
    const { body, headers } = delivery();
    expect(code(() => verifyWebhook(body, headers, SECRET))).toBe('verified');
    expect(code(() => verifyWebhook(Buffer.from(body), new Headers(headers), SECRET))).toBe('verified');
    const event = unwrapWebhook(body, headers, SECRET);
    expect(event).toMatchObject({ type: 'video.completed', data: { id: 'vid_1' } });
    const client = new Mediagate({ apiKey: 'unused', baseURL: 'http://127.0.0.1:9' });
    expect(client.webhooks.unwrap(body, headers, SECRET).type).toBe('video.completed');
  });

  it('accepts any one of several space-separated signatures (a rotated secret)', () => {
    const { body, headers } = delivery();
    const other = sign(`whsec_${Buffer.from('another secret').toString('base64')}`, 'evt_1', Number(headers['webhook-timestamp']), body);
    expect(code(() => verifyWebhook(body, { ...headers, 'webhook-signature': `v2,abc ${other} ${headers['webhook-signature']}` }, SECRET))).toBe('verified');
    expect(code(() => verifyWebhook(body, { ...headers, 'webhook-signature': other }, SECRET))).toBe('invalid_signature');
  });

  it('rejects a tampered body, a tampered timestamp, a wrong secret, a stale or future timestamp and missing headers', () => {
    const { body, headers } = delivery();
    expect(code(() => verifyWebhook(body.replace('completed', 'failed'), headers, SECRET))).toBe('invalid_signature');
    expect(code(() => verifyWebhook(body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) }, SECRET))).toBe(
      'invalid_signature',
    );
    expect(code(() => verifyWebhook(body, { ...headers, 'webhook-id': 'evt_2' }, SECRET))).toBe('invalid_signature');
    expect(code(() => verifyWebhook(body, headers, `whsec_${Buffer.from('wrong').toString('base64')}`))).toBe('invalid_signature');
    const old = delivery({ timestamp: Math.floor(Date.now() / 1000) - 301 });
    expect(code(() => verifyWebhook(old.body, old.headers, SECRET))).toBe('timestamp_too_old');
    const future = delivery({ timestamp: Math.floor(Date.now() / 1000) + 301 });
    expect(code(() => verifyWebhook(future.body, future.headers, SECRET))).toBe('timestamp_too_new');
    expect(code(() => verifyWebhook(body, { ...headers, 'webhook-timestamp': 'soon' }, SECRET))).toBe('invalid_timestamp');
    const { 'webhook-signature': _dropped, ...unsigned } = headers;
    expect(code(() => verifyWebhook(body, unsigned, SECRET))).toBe('missing_header');
    expect(code(() => verifyWebhook(body, headers, 'whsec_***'))).toBe('invalid_secret');
  });

  it('unwrap refuses a verified body that is not a delivery', () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const body = '{"hello":1}';
    const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': sign(SECRET, 'evt_1', timestamp, body) };
    expect(code(() => unwrapWebhook(body, headers, SECRET))).toBe('invalid_payload');
  });
});

/**
 * Logs are quiet and safe: every line of a request carries its request id (also sent as
 * `x-request-id`), and no line holds an API key, a data-URL payload or a prompt beyond a short
 * prefix, even when a careless error message contains them. Output is captured through a pino
 * destination stream at `trace` level and scanned.
 */
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScrubber, createLogger } from '../src/logging.js';
import { prettyLine } from '../src/logging-pretty.js';
import { loadConfig } from '../src/config.js';
import type { Engine, RenderJob } from '../src/engines/types.js';
import { createInstantEngine } from '../src/engines/instant.js';
import { eventually } from './helpers/eventually.js';
import { TEST_KEYS, startServer, type TestServer } from './helpers/server.js';

const PROMPT_HEAD = 'a quiet lighthouse';
const PROMPT_TAIL = 'SECRET-PROMPT-TAIL-7f3a9c';
const PROMPT = `${PROMPT_HEAD} at dusk, painted slowly and carefully, ${PROMPT_TAIL}`;
const FORGED_KEY = `mg_${'Q'.repeat(36)}`;

let lines: string[] = [];
/** Emits 'change' at every line written. */
const written = new EventEmitter();
let server: TestServer;
let payload = '';

/** An engine whose failure message is careless: it quotes the prompt, the input and a key. */
function carelessEngine(): Engine {
  const instant = createInstantEngine();
  return {
    name: 'careless',
    async render(job: RenderJob) {
      if (job.params['prompt'] === 'fail loudly') {
        throw new Error(`upstream refused data:image/png;base64,${payload} with Bearer ${TEST_KEYS[0]} (key ${TEST_KEYS[1]})`);
      }
      return instant.render(job);
    },
    close: () => instant.close(),
  };
}

beforeAll(async () => {
  const png = await sharp({ create: { width: 320, height: 320, channels: 3, background: '#336699' } })
    .png()
    .toBuffer();
  payload = png.toString('base64');
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(
        ...chunk
          .toString()
          .split('\n')
          .filter((line) => line !== ''),
      );
      written.emit('change');
      callback();
    },
  });
  server = await startServer({ LOG_LEVEL: 'trace' }, { logger: createLogger({ level: 'trace', secrets: TEST_KEYS, destination }), engine: carelessEngine() });
});

afterAll(async () => server.close());

async function post(path: string, body: unknown, key: string = TEST_KEYS[0]): Promise<Response> {
  return fetch(server.url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function settle(id: string): Promise<void> {
  await eventually(
    async () => {
      const res = await fetch(`${server.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${TEST_KEYS[0]}` } });
      const task = (await res.json()) as { status: string };
      return task.status === 'completed' || task.status === 'failed';
    },
    { deadline: 15_000, interval: 50, what: `task ${id} to settle` },
  );
}

/** The last line of a request is its response line, written after the client has the answer. */
async function responseLogged(ids: string[]): Promise<void> {
  const answered = (id: string): boolean =>
    lines.some((line) => {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      return parsed['reqId'] === id && (parsed['msg'] === 'request' || parsed['msg'] === 'request failed');
    });
  await eventually(() => ids.every(answered), { what: 'a response line for every request', wake: { emitter: written } });
}

describe('logs', () => {
  it('carry the request id and never a key, a payload or a whole prompt', async () => {
    lines = [];
    const ids: string[] = [];
    const image = `data:image/png;base64,${payload}`;
    const created = await post('/v1/video/generations', { model: 'vendora/famw-2.7-i2v', prompt: PROMPT, image, duration: 2 });
    expect(created.status).toBe(200);
    ids.push(created.headers.get('x-request-id') ?? '');
    await settle(((await created.json()) as { id: string }).id);

    const failing = await post('/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: 'fail loudly', duration: 2 });
    ids.push(failing.headers.get('x-request-id') ?? '');
    await settle(((await failing.json()) as { id: string }).id);

    const invalid = await post('/v1/video/generations', { model: 'vendora/famw-2.7-i2v', prompt: PROMPT, image, duration: 999 });
    expect(invalid.status).toBe(400);
    ids.push(invalid.headers.get('x-request-id') ?? '');
    const unknownKey = await post('/v1/images/generations/async', { model: 'x', prompt: PROMPT }, FORGED_KEY);
    expect(unknownKey.status).toBe(401);
    ids.push(unknownKey.headers.get('x-request-id') ?? '');

    // A fault whose error message quotes everything it should not.
    const original = server.app.service.create.bind(server.app.service);
    server.app.service.create = () => Promise.reject(new Error(`boom for ${PROMPT} ${image} Bearer ${TEST_KEYS[0]} ${FORGED_KEY}`));
    const fault = await post('/v1/video/generations', { model: 'vendora/famw-2.7-i2v', prompt: PROMPT, image, duration: 2 });
    server.app.service.create = original;
    expect(fault.status).toBe(500);
    ids.push(fault.headers.get('x-request-id') ?? '');

    await responseLogged(ids);
    const text = lines.join('\n');
    expect(lines.length).toBeGreaterThan(5);
    for (const secret of [...TEST_KEYS, FORGED_KEY]) expect(text, 'an API key in the logs').not.toContain(secret);
    expect(text, 'a data-URL payload in the logs').not.toContain(payload.slice(0, 40));
    expect(text, 'a prompt beyond its prefix in the logs').not.toContain(PROMPT_TAIL);

    // One request line per request, each with the id the client got in x-request-id.
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const id of ids) {
      expect(id).not.toBe('');
      expect(
        parsed.some((line) => line['reqId'] === id),
        `a log line for request ${id}`,
      ).toBe(true);
    }
    for (const line of parsed) {
      if ('url' in line || line['msg'] === 'request' || line['msg'] === 'unexpected error')
        expect(line['reqId'], JSON.stringify(line)).toEqual(expect.any(String));
    }
    const faultLine = parsed.find((line) => line['msg'] === 'unexpected error');
    expect(faultLine, 'the fault is logged').toBeDefined();
    expect(JSON.stringify(faultLine)).toContain('boom for');
  });
});

describe('createScrubber', () => {
  const scrub = createScrubber(['configured-secret-1']);
  it.each([
    ['Authorization: Bearer abc.def-ghi', 'Authorization: Bearer [redacted]'],
    [`key mg_${'a'.repeat(36)} used`, 'key mg_[redacted] used'],
    ['token configured-secret-1 here', 'token [redacted] here'],
    [`data:image/png;base64,${'A'.repeat(100)}`, 'data:image/png;base64,[122 chars]'],
  ])('%s', (input, output) => {
    expect(scrub(input)).toBe(output);
  });

  it('cuts long strings', () => {
    expect(scrub('x'.repeat(10_000)).length).toBeLessThan(600);
  });
});

describe('task lines', () => {
  it('say what happened to each task, with its model, duration and failure code', async () => {
    lines = [];
    const done = await post('/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: 'a calm sea', duration: 2 });
    const doneId = ((await done.json()) as { id: string }).id;
    await settle(doneId);
    const failing = await post('/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: 'fail loudly', duration: 2 });
    const failedId = ((await failing.json()) as { id: string }).id;
    await settle(failedId);
    const parsed = (): Record<string, unknown>[] => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    // The line is written after the settle the poll saw.
    await eventually(() => parsed().some((line) => line['task'] === failedId && line['msg'] === 'task failed'), {
      what: `the "task failed" line of ${failedId}`,
    });
    const all = parsed();
    expect(
      all.some((line) => line['msg'] === 'task rendered'),
      'the old wording',
    ).toBe(false);
    const completed = all.find((line) => line['task'] === doneId && line['msg'] === 'task completed');
    expect(completed).toMatchObject({ level: 30, model: 'vendora/famw-2.7-t2v', outcome: 'completed', durationMs: expect.any(Number) });
    expect(completed?.['failure']).toBeUndefined();
    const failed = all.find((line) => line['task'] === failedId && line['msg'] === 'task failed');
    expect(failed).toMatchObject({ level: 40, model: 'vendora/famw-2.7-t2v', outcome: 'failed', failure: 'generation_failed', durationMs: expect.any(Number) });
    // No line carries a key twice (JSON.parse would keep only the last `pid`).
    for (const line of lines) expect(line.match(/"pid":/g)?.length ?? 0, line).toBeLessThanOrEqual(1);
  });
});

describe('pretty format', () => {
  it('lays a JSON line out for a person: time, level, message, fields, and the stack below', () => {
    const json = JSON.stringify({
      level: 50,
      time: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
      pid: 1,
      hostname: 'h',
      msg: 'task failed',
      task: 'vid_1',
      model: 'a b',
      err: { stack: 'Error: x\n    at f' },
    });
    expect(prettyLine(json)).toBe('03:04:05.678 ERROR task failed task=vid_1 model="a b"\n    Error: x\n        at f\n');
  });

  it('is what createLogger writes with format pretty, after scrubbing', () => {
    const out: string[] = [];
    const logger = createLogger({ level: 'info', format: 'pretty', secrets: ['sekrit-key-1'], destination: { write: (line: string) => void out.push(line) } });
    logger.info({ task: 'vid_2' }, 'hello sekrit-key-1');
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}hello \[redacted\] task=vid_2\n$/);
  });

  it('LOG_FORMAT is json, pretty or auto', () => {
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT/);
  });
});

/**
 * OpenTelemetry traces of one task's life (docs/operations/observability.md, "Traces"): a
 * small OTLP/HTTP receiver takes what `mediagate` processes export, configured only by the
 * standard OTEL_* variables. A create carrying a client's `traceparent` is continued: the HTTP
 * server span, the upstream submit and polls (client spans with the provider's request id), the
 * output copy, the charge and the webhook delivery all carry the client's trace id and
 * `mediagate.task_id`, from one process on SQLite and from an API process and a worker process
 * apart on PostgreSQL. No attribute holds a key or a signature; log lines carry trace_id and
 * span_id. Also: http/protobuf is exported too, and without the variables nothing is.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashscopeFake, type DashscopeFake } from './fakes/dashscope.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, type TestDatabase } from './helpers/postgres.js';
import { freePort, startProcess, startWorkerProcess, type ServiceProcess } from './helpers/process.js';
import { makeTestCa, startReceiver, type TestCa, type WebhookReceiver } from './helpers/webhook-receiver.js';

const KEY = 'mg_test_key_alpha_0123456789';
const UPSTREAM_KEY = 'sk-dashscope-test';
const T2V = 'vendora/famw-2.7-t2v';
const split = process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'split';
const postgres = (await postgresAvailability()).enabled;

interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
}

/** An OTLP/HTTP receiver: JSON bodies decoded to spans, protobuf bodies counted. */
interface Collector {
  readonly endpoint: string;
  readonly spans: ExportedSpan[];
  protobufBodies: number;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
const valueOf = (value: AnyValue): string | number | boolean =>
  value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue ?? ''));
const attributesOf = (list: { key: string; value: AnyValue }[] | undefined): Record<string, string | number | boolean> =>
  Object.fromEntries((list ?? []).map((attribute) => [attribute.key, valueOf(attribute.value)]));

async function startCollector(): Promise<Collector> {
  const collector: Collector = { endpoint: '', spans: [], protobufBodies: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.url === '/v1/traces' && (req.headers['content-type'] ?? '').includes('json')) {
        const parsed = JSON.parse(body.toString('utf8')) as {
          resourceSpans: {
            resource: { attributes: { key: string; value: AnyValue }[] };
            scopeSpans: { spans: (Omit<ExportedSpan, 'attributes' | 'service'> & { attributes?: { key: string; value: AnyValue }[] })[] }[];
          }[];
        };
        for (const resource of parsed.resourceSpans) {
          const service = String(attributesOf(resource.resource.attributes)['service.name'] ?? '');
          for (const scope of resource.scopeSpans)
            for (const span of scope.spans)
              collector.spans.push({ ...span, service, parentSpanId: span.parentSpanId ?? '', attributes: attributesOf(span.attributes) });
        }
      } else if (req.url === '/v1/traces' && body.length > 0) collector.protobufBodies += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    ...collector,
    get spans() {
      return collector.spans;
    },
    get protobufBodies() {
      return collector.protobufBodies;
    },
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const otel = (collector: Collector, protocol: 'http/json' | 'http/protobuf', service: string): Record<string, string> => ({
  OTEL_TRACES_EXPORTER: 'otlp',
  OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_SERVICE_NAME: service,
  OTEL_BSP_SCHEDULE_DELAY: '100',
});

async function stop(processes: readonly ServiceProcess[]): Promise<void> {
  for (const process of processes) {
    if (process.child.exitCode !== null) continue;
    process.child.kill('SIGTERM');
    await process.exited;
  }
}

describe.skipIf(split)('traces of a task', () => {
  let fake: DashscopeFake;
  let ca: TestCa;
  let receiver: WebhookReceiver;
  let dir = '';
  let base: Record<string, string> = {};

  beforeAll(async () => {
    fake = await startDashscopeFake({ apiKey: UPSTREAM_KEY, queuedMs: 100, runMs: 400 });
    ca = await makeTestCa();
    receiver = await startReceiver(ca);
    dir = await mkdtemp(join(tmpdir(), 'mediagate-traces-'));
    await writeFile(
      join(dir, 'channels.json'),
      JSON.stringify({
        channels: { wan: { protocol: 'dashscope', base_url: fake.origin, api_key_env: 'T_KEY' } },
        routes: [
          { model: T2V, to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
          { model: '*', to: [{ channel: 'sandbox' }] },
        ],
      }),
    );
    await writeFile(join(dir, 'pricing.json'), JSON.stringify({ currency: 'USD', models: { '*': { per_task: 0.25 } } }));
    base = {
      MEDIAGATE_API_KEYS: KEY,
      MEDIAGATE_ENGINE: 'instant',
      MEDIAGATE_CHANNELS_FILE: join(dir, 'channels.json'),
      MEDIAGATE_PRICING_FILE: join(dir, 'pricing.json'),
      MEDIAGATE_FETCH_ALLOW_HOSTS: '127.0.0.1',
      NODE_EXTRA_CA_CERTS: ca.caFile,
      T_KEY: UPSTREAM_KEY,
    };
  }, 60_000);

  afterAll(async () => {
    await receiver?.close();
    await ca?.remove();
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Creates a routed task under a client's trace, with a webhook, and returns the trace id and the task id. */
  async function routedTask(url: string): Promise<{ traceId: string; clientSpan: string; taskId: string }> {
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const hook = await fetch(`${url}/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: `${receiver.origin}/traces` }) });
    expect(hook.status).toBe(200);
    const traceId = randomBytes(16).toString('hex');
    const clientSpan = randomBytes(8).toString('hex');
    const created = await fetch(`${url}/v1/video/generations`, {
      method: 'POST',
      headers: { ...headers, traceparent: `00-${traceId}-${clientSpan}-01` },
      body: JSON.stringify({ model: T2V, prompt: 'a traced task', duration: 2 }),
    });
    expect(created.status).toBe(200);
    const taskId = ((await created.json()) as { id: string }).id;
    await eventually(
      async () => {
        const task = (await (await fetch(`${url}/v1/video/generations/${taskId}`, { headers })).json()) as { status: string };
        return task.status === 'completed';
      },
      { deadline: 60_000, interval: 200, what: 'the traced task to complete' },
    );
    return { traceId, clientSpan, taskId };
  }

  /** Every step of the task's life, in the client's trace, each with the task's attributes. */
  async function checkTrace(collector: Collector, trace: { traceId: string; clientSpan: string; taskId: string }): Promise<ExportedSpan[]> {
    const names = [
      'POST /v1/video/generations',
      'mediagate.upstream.submit',
      'mediagate.upstream.poll',
      'mediagate.output_copy',
      'mediagate.charge',
      'mediagate.webhook.delivery',
    ];
    const spans = await eventually(
      () => {
        const found = collector.spans.filter((span) => span.traceId === trace.traceId);
        return names.every((name) => found.some((span) => span.name === name)) ? found : undefined;
      },
      {
        deadline: 60_000,
        interval: 100,
        what: `spans ${names.join(', ')} in trace ${trace.traceId} (have: ${collector.spans
          .filter((span) => span.traceId === trace.traceId)
          .map((span) => span.name)
          .join(', ')})`,
      },
    );
    const byName = (name: string) => spans.filter((span) => span.name === name);
    const server = byName('POST /v1/video/generations')[0];
    // SERVER = 2, CLIENT = 3, PRODUCER = 4 (OTLP's SpanKind).
    expect(server).toMatchObject({ kind: 2, parentSpanId: trace.clientSpan });
    expect(server?.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/v1/video/generations', 'http.response.status_code': 200 });
    for (const span of spans.filter((candidate) => candidate.name.startsWith('mediagate.'))) {
      expect(span.attributes['mediagate.task_id'], span.name).toBe(trace.taskId);
      if (span.name !== 'mediagate.webhook.delivery') expect(span.attributes['mediagate.model'], span.name).toBe(T2V);
      expect(String(span.attributes['mediagate.key_id']), span.name).toMatch(/^key_/);
    }
    for (const name of ['mediagate.upstream.submit', 'mediagate.upstream.poll']) {
      for (const span of byName(name)) {
        expect(span.kind, name).toBe(3);
        expect(span.attributes['mediagate.channel'], name).toBe('wan');
        // Under the create's span: the task's stored context, from whichever process.
        expect(span.parentSpanId, name).toBe(server?.spanId);
      }
    }
    expect(byName('mediagate.upstream.submit')[0]?.attributes['mediagate.upstream.request_id']).toBeTruthy();
    expect(byName('mediagate.charge')[0]?.attributes['mediagate.cost_micro']).toBe(250_000);
    // The charge runs inside the copy that ends the task.
    expect(byName('mediagate.charge')[0]?.parentSpanId).toBe(byName('mediagate.output_copy')[0]?.spanId);
    expect(byName('mediagate.webhook.delivery')[0]).toMatchObject({ kind: 4 });
    // The receiver's 2xx (it answers 204).
    expect(byName('mediagate.webhook.delivery')[0]?.attributes['http.response.status_code']).toBe(204);
    // No key, channel key or signature in any attribute of any span.
    const text = JSON.stringify(collector.spans);
    for (const secret of [KEY, UPSTREAM_KEY, 'Signature=', 'X-Amz-Signature', 'sig=']) expect(text).not.toContain(secret);
    return spans;
  }

  it('follows a routed task from the client through one process on SQLite, with trace ids on its log lines', async () => {
    const collector = await startCollector();
    const port = await freePort();
    const serve = await startProcess(['serve'], {
      ...base,
      ...otel(collector, 'http/json', 'mediagate-one'),
      PORT: String(port),
      MEDIAGATE_DATA_DIR: join(dir, 'one'),
    });
    try {
      const trace = await routedTask(serve.url);
      const spans = await checkTrace(collector, trace);
      expect(new Set(spans.map((span) => span.service))).toEqual(new Set(['mediagate-one']));
      // A log line written inside the trace says which.
      const lines = serve
        .output()
        .split('\n')
        .filter((line) => line.includes(trace.taskId) && line.includes('"trace_id"'));
      expect(lines.length, serve.output().slice(-2000)).toBeGreaterThan(0);
      for (const line of lines) expect((JSON.parse(line) as { trace_id: string }).trace_id).toBe(trace.traceId);
    } finally {
      await stop([serve]);
      await collector.close();
    }
  }, 120_000);

  it.skipIf(!postgres)(
    'follows it across an API process and a worker process on PostgreSQL',
    async () => {
      const collector = await startCollector();
      const database: TestDatabase = await createTestDatabase();
      const shared = { ...base, DATABASE_URL: database.url, MEDIAGATE_DATA_DIR: join(dir, 'split') };
      const processes: ServiceProcess[] = [];
      try {
        processes.push(
          await startProcess(['serve', '--no-workers'], { ...shared, ...otel(collector, 'http/json', 'mediagate-api'), PORT: String(await freePort()) }),
        );
        processes.push(await startWorkerProcess({ ...shared, ...otel(collector, 'http/json', 'mediagate-worker') }));
        const trace = await routedTask(processes[0]?.url ?? '');
        const spans = await checkTrace(collector, trace);
        const serviceOf = (name: string) => new Set(spans.filter((span) => span.name === name).map((span) => span.service));
        expect(serviceOf('POST /v1/video/generations')).toEqual(new Set(['mediagate-api']));
        expect(serviceOf('mediagate.upstream.submit')).toEqual(new Set(['mediagate-worker']));
      } finally {
        await stop(processes);
        await collector.close();
        await database.drop();
      }
    },
    120_000,
  );

  it('exports http/protobuf too, and nothing without the variables', async () => {
    const collector = await startCollector();
    const withProtobuf = await startProcess(['serve'], {
      ...base,
      ...otel(collector, 'http/protobuf', 'mediagate-proto'),
      PORT: String(await freePort()),
      MEDIAGATE_DATA_DIR: join(dir, 'proto'),
    });
    const plainPort = await freePort();
    // The variables of this process only: nothing of OpenTelemetry's in its environment.
    const plain = await startProcess(['serve'], { ...base, PORT: String(plainPort), MEDIAGATE_DATA_DIR: join(dir, 'plain') });
    try {
      await fetch(`${withProtobuf.url}/healthz`);
      await eventually(() => collector.protobufBodies > 0, { deadline: 20_000, interval: 100, what: 'a protobuf export' });
      const before = collector.spans.length + collector.protobufBodies;
      for (let i = 0; i < 5; i += 1) await fetch(`${plain.url}/healthz`, { headers: { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` } });
      await fetch(`${withProtobuf.url}/healthz`);
      // The protobuf process's next export arrives; the plain process sent nothing meanwhile.
      await eventually(() => collector.protobufBodies > before, { deadline: 20_000, interval: 100, what: 'the next protobuf export' });
      expect(collector.spans.filter((span) => span.traceId === 'a'.repeat(32))).toEqual([]);
      expect(plain.output()).not.toContain('trace_id');
    } finally {
      await stop([withProtobuf, plain]);
      await collector.close();
    }
  }, 90_000);
});

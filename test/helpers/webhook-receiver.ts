import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A certificate authority made for one run (openssl), and a 127.0.0.1/localhost certificate it signed. */
export interface TestCa {
  readonly dir: string;
  /** PEM of the CA: what the service is told to trust (option or NODE_EXTRA_CA_CERTS=caFile). */
  readonly ca: Buffer;
  readonly caFile: string;
  readonly cert: Buffer;
  readonly key: Buffer;
  remove(): Promise<void>;
}

export async function makeTestCa(): Promise<TestCa> {
  const dir = await mkdtemp(join(tmpdir(), 'mediagate-webhook-ca-'));
  const file = (name: string) => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const run = (args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  run(['req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=mediagate test CA']);
  run(['req', ...ec, '-keyout', file('leaf.key'), '-out', file('leaf.csr'), '-subj', '/CN=127.0.0.1']);
  await writeFile(
    file('leaf.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n',
  );
  run([
    'x509',
    '-req',
    '-in',
    file('leaf.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('leaf.pem'),
    '-days',
    '2',
    '-extfile',
    file('leaf.ext'),
  ]);
  return {
    dir,
    ca: await readFile(file('ca.pem')),
    caFile: file('ca.pem'),
    cert: await readFile(file('leaf.pem')),
    key: await readFile(file('leaf.key')),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

export interface ReceivedWebhook {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  /** The raw body, as the signature covers it. */
  readonly body: string;
  readonly at: number;
  /** What the receiver answered (`hang`: nothing). */
  readonly answer: Answer;
}

/** 2xx; 500; no answer at all; a 302 to /ok. */
export type Answer = 'ok' | 'fail' | 'hang' | 'redirect';

export interface WebhookReceiver {
  /** `https://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  readonly received: ReceivedWebhook[];
  /** Emits 'change' on every request. */
  readonly events: EventEmitter;
  /** What the next requests get, by path; default 'ok'. */
  answer: (path: string, count: number) => Answer;
  close(): Promise<void>;
}

/** An HTTPS receiver with the run's CA's certificate that records every request. */
export async function startReceiver(ca: TestCa, port = 0): Promise<WebhookReceiver> {
  const events = new EventEmitter();
  const received: ReceivedWebhook[] = [];
  const hanging: ServerResponse[] = [];
  const receiver: WebhookReceiver = {
    origin: '',
    port: 0,
    received,
    events,
    answer: () => 'ok',
    close: async () => {},
  };
  const server: Server = createServer({ cert: ca.cert, key: ca.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      const answer = receiver.answer(path, received.filter((item) => item.path === path).length);
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now(), answer });
      events.emit('change');
      if (answer === 'ok') res.writeHead(204).end();
      else if (answer === 'fail') res.writeHead(500).end('no');
      else if (answer === 'redirect') res.writeHead(302, { location: '/ok' }).end();
      else hanging.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  Object.assign(receiver, {
    origin: `https://127.0.0.1:${bound}`,
    port: bound,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return receiver;
}

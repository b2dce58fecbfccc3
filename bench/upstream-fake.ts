/**
 * The upstream of the bench's `upstream` phase, in its own process so that its CPU is not
 * counted as the server's: the DashScope fake (test/fakes/dashscope.ts; its task book computes
 * each task's state from its creation time, so 10,000 tasks of 60 s cost a Map, no timers),
 * every task running `UPSTREAM_FAKE_RUN_MS` from its submission, and a control listener that
 * reports the fake's poll count and each task's finish instant (same machine clock as the
 * server's `completed_at`).
 *
 * Prints `upstream fake <origin> <control origin>` when ready.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDashscopeFake } from '../test/fakes/dashscope.js';

const runMs = Number(process.env['UPSTREAM_FAKE_RUN_MS'] ?? '60000');
const fake = await startDashscopeFake({ apiKey: process.env['UPSTREAM_FAKE_KEY'] ?? 'sk-bench', queuedMs: 0, runMs, outputTtlMs: 24 * 3_600_000 });

/** GET /stats: `{polls, submits, files, tasks: [[upstream id, prompt, finishedAtMs], ...]}`. */
const control = createServer((req, res) => {
  if (req.url !== '/stats') {
    res.writeHead(404).end();
    return;
  }
  const tasks: [string, string, number][] = [];
  for (const task of fake.book.tasks.values()) tasks.push([task.id, task.prompt, task.createdAt + task.plan.queuedMs + task.plan.runMs]);
  const stats = fake.http.stats;
  const body = JSON.stringify({ polls: stats.byRole.get('poll') ?? 0, submits: stats.byRole.get('submit') ?? 0, files: stats.byRole.get('file') ?? 0, tasks });
  res.writeHead(200, { 'content-type': 'application/json' }).end(body);
});
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
process.stdout.write(`upstream fake ${fake.origin} http://127.0.0.1:${(control.address() as AddressInfo).port}\n`);

const stop = (): void => {
  control.close();
  void fake.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

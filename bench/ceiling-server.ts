/**
 * The ceiling: a bare node:http server answering a fixed JSON body the size of a video task
 * object. Nothing mediagate does per request can be faster than this on the same machine.
 *
 * BENCH_WORK_US=N makes it spin N µs of CPU per request before answering (bench/run.ts, the
 * `work` phase): a server that does N µs more than the bare one, and nothing else, to read
 * what a ratio to the ceiling allows a real server to do.
 */
import { createServer } from 'node:http';

const body = JSON.stringify({
  id: 'vid_AAAAAAAAAAAAAAAAAAAAAA',
  object: 'video.generation',
  model: 'vendora/famw-2.7-t2v',
  status: 'queued',
  outputs: [],
  created_at: 1_795_324_948,
  started_at: null,
  completed_at: null,
  progress: null,
  error: null,
});
const port = Number(process.env['PORT'] ?? 0);
const workMs = Number(process.env['BENCH_WORK_US'] ?? 0) / 1000;
createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (workMs > 0) {
      const until = performance.now() + workMs;
      while (performance.now() < until);
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}).listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));

/**
 * The ceiling: a bare node:http server answering a fixed JSON body the size of a video task
 * object. Nothing mediagate does per request can be faster than this on the same machine.
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
createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}).listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));

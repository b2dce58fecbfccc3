/**
 * The client commands of the `mediagate` bin, run as child processes as built (dist/, as an
 * operator runs them) against a real in-process server: output on stdout and stderr, local files
 * as data URLs, --download, --json, the exit codes (2 usage, 3 validation, 4 auth, 5 task failed,
 * 6 not found, 1 other, 130 interrupted, 143 terminated), Ctrl-C or SIGTERM leaving the task running with a resume command,
 * and the live progress bar in a pseudo-terminal (util-linux `script`).
 *
 * Tasks whose prompt contains `[slow]` advance in visible steps (a pacing wrapper around the
 * sandbox engine), so progress and interruption can be observed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mediagate, type Fetch } from '../src/client/index.js';
import { findTask } from '../src/cli/client-commands/tasks.js';
import { createSandboxEngine } from '../src/engines/sandbox/engine.js';
import { defaultFfmpegPath } from '../src/engines/sandbox/ffmpeg-path.js';
import { CLI, freePort } from './helpers/process.js';
import { pacedEngine } from './helpers/paced-engine.js';
import { startServer, type TestServer } from './helpers/server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

interface RunOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Called with each stderr chunk and the child, e.g. to send SIGINT at the right moment. */
  readonly onStderr?: (text: string, kill: (signal: NodeJS.Signals) => void) => void;
}

let server: TestServer;
let dir: string;
let pngPath: string;

function childEnv(extra: Readonly<Record<string, string | undefined>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, MEDIAGATE_BASE_URL: server.url, MEDIAGATE_API_KEY: server.keys[0], ...extra };
  for (const [key, value] of Object.entries(extra)) if (value === undefined) delete env[key];
  return env;
}

/** `mediagate <args>` as built (dist/), stdout and stderr not a terminal. */
function cli(args: readonly string[], options: RunOptions = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      env: childEnv(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      options.onStderr?.(stderr, (signal) => child.kill(signal));
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const hasScript = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const shellQuote = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`;

/** `mediagate <args>` in a pseudo-terminal: `script -qfec CMD /dev/null`; returns what the terminal showed. */
function tty(args: readonly string[]): Promise<Run> {
  const command = [process.execPath, CLI, ...args].map(shellQuote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr: '' }));
  });
}

beforeAll(async () => {
  server = await startServer({}, { engine: pacedEngine(createSandboxEngine({ ffmpegPath: defaultFfmpegPath() }), 150) });
  dir = await mkdtemp(join(tmpdir(), 'mediagate-cli-'));
  pngPath = join(dir, 'first frame.png');
  await writeFile(
    pngPath,
    await sharp({ create: { width: 400, height: 300, channels: 3, background: '#cc5500' } })
      .png()
      .toBuffer(),
  );
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const T2V = ['-m', 'vendora/famw-2.7-t2v', '--duration', '2', '--resolution', '480p'] as const;
const PROGRESS_LINE = /^vid_\S+ (queued|processing|completed) +(\d+|-)% \d+:\d\d$/gm;

describe('video create', () => {
  it('--wait --download: plain progress lines on stderr, the saved path on stdout', async () => {
    const out = join(dir, 'downloads');
    const run = await cli(['video', 'create', ...T2V, '-p', '[slow] a fox in snow', '--download', out, '--poll-interval', '100']);
    expect(run.code, run.stderr).toBe(0);
    const id = /Created video task (vid_\S+)\./.exec(run.stderr)?.[1] ?? '';
    expect(id).toMatch(/^vid_/);
    expect(run.stdout).toBe(`${join(out, `${id}.mp4`)}\n`);
    expect(await readdir(out)).toEqual([`${id}.mp4`]);
    expect((await readFile(join(out, `${id}.mp4`))).subarray(4, 8).toString('latin1')).toBe('ftyp');

    expect(run.stderr).not.toContain('\r');
    const lines = [...run.stderr.matchAll(PROGRESS_LINE)];
    expect(lines.length).toBeGreaterThanOrEqual(3);
    const percents = lines.map((match) => Number(match[2] === '-' ? 0 : match[2]));
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(lines.at(-1)?.[0]).toMatch(/completed +100%/);
    expect(run.stderr).toMatch(new RegExp(`${id} completed in \\d+:\\d\\d; saved 1 file`));
  });

  it('without --wait prints only the id on stdout and how to wait on stderr; task get / wait follow it', async () => {
    const run = await cli(['video', 'create', ...T2V, '-p', 'a fox', '--aspect-ratio', '9:16']);
    expect(run.code, run.stderr).toBe(0);
    const id = run.stdout.trim();
    expect(id).toMatch(/^vid_[\w-]{30}$/);
    expect(run.stderr).toContain(`mediagate task wait ${id}`);

    const waited = await cli(['task', 'wait', id, '--json', '--poll-interval', '100']);
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ id, status: 'completed', progress: 100, model: 'vendora/famw-2.7-t2v' });

    const shown = await cli(['task', 'get', id]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id +${id}$`, 'm'));
    expect(shown.stdout).toMatch(/^status +completed$/m);
    expect(shown.stdout).toMatch(/^output +http:\/\/127\.0\.0\.1:\d+\/files\//m);
    // Nothing is priced on this server: the usage line says what was delivered, not "USD 0.00".
    expect(shown.stdout).toMatch(/^usage +\d+ s, 0 images$/m);
  });

  it('sends a local file as a data URL', async () => {
    const run = await cli([
      'video',
      'create',
      '-m',
      'vendord/v6/image-to-video',
      '-p',
      'embers',
      '--image',
      pngPath,
      '--duration',
      '1',
      '--resolution',
      '360p',
      '--no-audio-enable',
      '--wait',
      '--json',
      '-q',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'completed', model: 'vendord/v6/image-to-video' });
  });

  it('takes several files for an array flag, and @FILE in --set', async () => {
    const refs = ['--images', pngPath, pngPath];
    const ok = await cli(['video', 'create', '-m', 'vendora/famw-2.7-ref2v-uncensored', '-p', 'refs', ...refs, '--duration', '2', '--wait', '--json', '-q']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ status: 'completed' });

    const tooMany = await cli(['video', 'create', '-m', 'vendora/famw-2.7-ref2v-uncensored', '-p', 'refs', ...refs, pngPath, pngPath]);
    expect(tooMany.code).toBe(3);
    expect(tooMany.stderr).toMatch(/code: +unsupported_value/);
    expect(tooMany.stderr).toMatch(/param: +images/);

    const set = await cli([
      'video',
      'create',
      '-m',
      'vendora/famw-2.7-i2v',
      '-p',
      'at',
      '--set',
      `image=@${pngPath}`,
      ...T2V.slice(2),
      '--wait',
      '--json',
      '-q',
    ]);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ status: 'completed', model: 'vendora/famw-2.7-i2v' });
  });
});

describe('image create and task commands', () => {
  it('--wait --json prints the image task; task get finds it by id', async () => {
    const run = await cli([
      'image',
      'create',
      '-m',
      'vendora/famz-image-spicy-pro',
      '-p',
      'a lighthouse',
      '--size',
      '320x256',
      '--set',
      'seed=42',
      '--set',
      'prompt_extend=false',
      '--wait',
      '--json',
      '--poll-interval',
      '100',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const task = JSON.parse(run.stdout) as { task_id: string; status: string; outputs: string[] };
    expect(task).toMatchObject({ status: 'SUCCESS', progress: '100%' });
    expect(task.outputs).toHaveLength(1);

    const shown = await cli(['task', 'get', task.task_id, '--json']);
    expect(JSON.parse(shown.stdout)).toEqual(task);
    const other = await cli(['task', 'get', task.task_id], { env: { MEDIAGATE_API_KEY: server.keys[1] } });
    expect(other.code).toBe(6);
  });

  it('image --download saves a PNG named after the task', async () => {
    const out = join(dir, 'images');
    const run = await cli(['image', 'create', '-m', 'vendora/famz-image-spicy', '-p', 'dunes', '--width', '256', '--height', '256', '-d', out, '-q']);
    expect(run.code, run.stderr).toBe(0);
    const path = run.stdout.trim();
    expect(path).toMatch(/img_[\w-]{30}\.png$/);
    const meta = await sharp(await readFile(path)).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 256, 256]);
  });

  it('task get tries the other family when the id prefix misleads', async () => {
    const video = {
      id: 'img_looks_like_an_image',
      object: 'video.generation',
      model: 'm',
      status: 'queued',
      outputs: [],
      created_at: 1,
      started_at: null,
      completed_at: null,
      progress: null,
      error: null,
    };
    const paths: string[] = [];
    const fetch: Fetch = (url) => {
      paths.push(new URL(url).pathname);
      return Promise.resolve(
        url.includes('/v1/images/')
          ? new Response(JSON.stringify({ code: 'task_not_found', message: 'no', data: null }), { status: 404 })
          : new Response(JSON.stringify(video), { status: 200 }),
      );
    };
    const seen = await findTask(new Mediagate({ baseURL: 'http://x.test', apiKey: 'k', fetch }), video.id);
    expect(seen).toMatchObject({ kind: 'video', id: video.id, status: 'queued' });
    expect(paths).toEqual(['/v1/images/generations/async/img_looks_like_an_image', '/v1/video/generations/img_looks_like_an_image']);
  });
});

describe('models', () => {
  it('lists the models and shows one model’s parameters, ranges and defaults', async () => {
    const list = await cli(['models']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^MODEL +NAME +KIND +SUMMARY$/m);
    expect(list.stdout).toMatch(/^vendora\/famw-2\.7-t2v +FamW 2\.7 Text to Video +video +Text to video\.$/m);
    expect(list.stdout.split('\n').filter((line) => / (video|image) /.test(line))).toHaveLength(23);

    const one = await cli(['models', 'vendora/famw-2.7-t2v']);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^FamW 2\.7 Text to Video: vendora\/famw-2\.7-t2v /m);
    expect(one.stdout).toMatch(/^Makes a clip from the prompt alone: .* Clips of 2 to 15 s/m);
    expect(one.stdout).toMatch(/^PARAMETER +TYPE +REQUIRED +VALUES +DEFAULT +DESCRIPTION$/m);
    expect(one.stdout).toMatch(/^duration +integer +2 to 15 +5 +/m);
    expect(one.stdout).toMatch(/^resolution +string +480p, 720p, 1080p +720p +/m);
    expect(one.stdout).toMatch(/^aspect_ratio +string +adaptive, 16:9, 9:16, 1:1, 4:3, 3:4 +/m);
    expect(one.stdout).toMatch(/^prompt +string +yes +/m);

    const json = await cli(['models', 'vendora/famz-image-spicy', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: 'vendora/famz-image-spicy', kind: 'image' });
    expect((await cli(['models', 'vendorx/nothing'])).code).toBe(6);
  });
});

describe('errors and exit codes', () => {
  it('2 for usage: a missing flag, a bad number, a missing file, a malformed --set, a bad base URL', async () => {
    const runs = await Promise.all([
      cli(['video', 'create', '-m', 'vendora/famw-2.7-t2v']),
      cli(['video', 'create', ...T2V, '-p', 'x', '--duration', 'five']),
      cli(['video', 'create', '-m', 'vendora/famw-2.7-i2v', '-p', 'x', '--image', join(dir, 'missing.png')]),
      cli(['image', 'create', '-m', 'vendora/famz-image-spicy', '-p', 'x', '--set', 'no-equals']),
      cli(['models', '--base-url', 'ftp://nowhere']),
    ]);
    for (const run of runs) expect(run.code, run.stderr).toBe(2);
    expect(runs[0]?.stderr).toContain('--prompt');
    expect(runs[2]?.stderr).toContain('missing.png');
  });

  it('3 for validation, printing code, param and message (and JSON with --json)', async () => {
    const run = await cli(['video', 'create', ...T2V, '-p', 'x', '--set', 'duration=99']);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^ {2}code: +unsupported_value$/m);
    expect(run.stderr).toMatch(/^ {2}param: +duration$/m);
    expect(run.stderr).toMatch(/^ {2}message: +\S/m);
    expect(run.stdout).toBe('');

    const json = await cli(['video', 'create', ...T2V, '-p', 'x', '--set', 'callback=1', '--json']);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { kind: 'validation', status: 400, code: 'unsupported_parameter', param: 'callback' } });

    const image = await cli(['image', 'create', '-m', 'vendora/famz-image-spicy', '-p', 'x', '--size', '512x512', '--width', '512']);
    expect(image.code).toBe(3);
    expect(image.stderr).toMatch(/code: +invalid_parameter/);
  });

  it('4 for a refused or missing key', async () => {
    const refused = await cli(['models', '--api-key', 'mg_wrong']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/code: +invalid_api_key/);
    const missing = await cli(['task', 'get', 'vid_x', '--json'], { env: { MEDIAGATE_API_KEY: undefined } });
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain('MEDIAGATE_API_KEY');
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: { kind: 'authentication' } });
  });

  it('5 when the task fails, with its code, param and message; the failed task is the --json output', async () => {
    const bad = join(dir, 'bad.png');
    await writeFile(bad, 'these bytes are not an image');
    const run = await cli(['video', 'create', '-m', 'vendora/famw-2.7-i2v', '-p', 'x', '--image', bad, '--wait', '--json', '--poll-interval', '100']);
    expect(run.code).toBe(5);
    expect(run.stderr).toMatch(/task vid_\S+ failed/);
    expect(run.stderr).toMatch(/code: +invalid_input/);
    expect(run.stderr).toMatch(/param: +image/);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'failed', error: { code: 'invalid_input', param: 'image' } });
  });

  it('6 for an unknown task, 1 when the service cannot be reached', async () => {
    const unknown = await cli(['task', 'get', 'vid_doesnotexist']);
    expect(unknown.code).toBe(6);
    expect(unknown.stderr).toMatch(/code: +task_not_found/);
    const down = await cli(['task', 'get', 'vid_x', '--base-url', `http://127.0.0.1:${await freePort()}`]);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('ECONNREFUSED');
  });
});

describe('SIGTERM while waiting', () => {
  it('stops waiting as Ctrl-C does (exit 143), leaves the task running, and prints the command that resumes', async () => {
    let sent = false;
    const run = await cli(['video', 'create', ...T2V, '-p', '[slow] terminated', '--wait', '--poll-interval', '100'], {
      onStderr: (text, kill) => {
        if (!sent && /processing +[1-9]\d*%/.test(text)) {
          sent = true;
          kill('SIGTERM');
        }
      },
    });
    expect(sent).toBe(true);
    expect(run.code, run.stderr).toBe(143);
    expect(run.stderr).toContain('Stopped waiting; task ');
    const id = /^ {2}mediagate task wait (vid_\S+)$/m.exec(run.stderr)?.[1] ?? '';
    expect(id).toMatch(/^vid_/);
    const client = new Mediagate({ baseURL: server.url, apiKey: server.keys[0] });
    expect((await client.videos.get(id)).status).toBe('processing');
  });
});

describe('Ctrl-C while waiting', () => {
  it('stops waiting (exit 130), leaves the task running, and prints the command that resumes', async () => {
    const out = join(dir, 'resumed');
    let sent = false;
    const run = await cli(['video', 'create', ...T2V, '-p', '[slow] interrupted', '--download', out, '--poll-interval', '100'], {
      onStderr: (text, kill) => {
        if (!sent && /processing +[1-9]\d*%/.test(text)) {
          sent = true;
          kill('SIGINT');
        }
      },
    });
    expect(sent).toBe(true);
    expect(run.code, run.stderr).toBe(130);
    const resume = /^ {2}(mediagate task wait (vid_\S+) .*)$/m.exec(run.stderr);
    expect(resume?.[1]).toBe(`mediagate task wait ${resume?.[2] ?? ''} --download ${out}`);
    const id = resume?.[2] ?? '';

    const client = new Mediagate({ baseURL: server.url, apiKey: server.keys[0] });
    expect((await client.videos.get(id)).status).toBe('processing');

    const resumed = await cli(['task', 'wait', id, '--download', out, '--poll-interval', '100']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout.trim()).toBe(join(out, `${id}.mp4`));
  });
});

describe.skipIf(!hasScript)('on a terminal', () => {
  it('draws one live line with a bar, percentage, status and elapsed time, redrawn with \\r', async () => {
    const run = await tty(['video', 'create', ...T2V, '-p', '[slow] on a terminal', '--wait', '--poll-interval', '100']);
    expect(run.code, run.stdout).toBe(0);
    const screen = run.stdout;
    const frames = screen.split('\r').filter((frame) => frame.includes('vid_'));
    expect(frames.length).toBeGreaterThan(5);
    expect(screen).toMatch(new RegExp(String.raw`vid_\S+ \[[█░]{24}\] +\d+% +processing +\d+:\d\d\u001b\[K`));
    expect(screen).toMatch(new RegExp(String.raw`✔ vid_\S+ \[█{24}\] 100% +completed +\d+:\d\d\u001b\[K`));
    // The plain per-change lines are only for non-terminals.
    expect(screen).not.toMatch(PROGRESS_LINE);
    expect(screen).toMatch(/http:\/\/127\.0\.0\.1:\d+\/files\/vid_\S+\.mp4/);
  });
});

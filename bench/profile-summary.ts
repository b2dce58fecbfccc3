/**
 * `npx tsx bench/profile-summary.ts <file.cpuprofile> [--top=N]`: what a `--profile` run of the
 * bench spent its main thread on, phase by phase. The bench's phases load one server in turn
 * with pauses between them (autocannon starting again), so the profile's busy stretches,
 * split at pauses of idle samples, are the phases' warm-ups and measurements in order. For each
 * stretch: the share of each step of a request (the first frame from the leaf that belongs to
 * a step, so a JSON.parse called by the body parser is "parse"), then the functions with the
 * most self time. Shares, not µs: the bench's server CPU per request (all threads) is what a
 * share is read against.
 */
import { readFile } from 'node:fs/promises';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/**
 * The steps of a create, by where their code lives (file path fragments, first match wins
 * from the leaf): the store and its driver are the insert; the catalog's validation; pricing;
 * the task bodies and Fastify's serialiser are the answer.
 */
const STEPS: ReadonlyArray<readonly [string, RegExp]> = [
  ['insert (store, SQLite)', /\/(src|dist)\/store\/|better-sqlite3|node:sqlite|group-commit/],
  ['queue (task service, feed, events)', /\/(src|dist)\/tasks\//],
  ['price', /\/(src|dist)\/billing\//],
  ['validate (catalog)', /\/(src|dist)\/catalog\/|ajv/],
  ['inputs (data URLs to files)', /\/(src|dist)\/storage\//],
  ['auth (key lookup, limits)', /\/(src|dist)\/auth\/|rate-limit/],
  ['answer (task body, serialise)', /\/(src|dist)\/wire\/|fast-json-stringify|serializ/],
  // The body's bounds and parse live in http/body/ (the router's JSON parser and the create fast path call them).
  ['parse (JSON body)', /json-parse|content-type-parser|secure-json-parse|\/(src|dist)\/http\/body\//],
  ['create flow (route, idempotency)', /\/(src|dist)\/http\/routes\/|\/(src|dist)\/http\/idempotency|\/(src|dist)\/frontdoors\//],
  ['framework (fastify, hooks, the fast paths)', /fastify|avvio|find-my-way|light-my-request|\/(src|dist)\/http\//],
  ['node:http, sockets', /node:_http|node:net|node:stream|node:internal\/streams|node:internal\/http/],
];

const IDLE = new Set(['(idle)', '(program)']);

/**
 * The create phases of the bench, told apart by a function only their requests run: the
 * profile is cut in windows, each given to the phase whose marker it holds most samples of.
 * Warm-up and measurement of one phase fall together; a window across two phases goes to one.
 */
const PHASES: ReadonlyArray<readonly [string, RegExp]> = [
  ['create video (data URLs)', /^(mkdir|rename|openFileHandle|writeFileHandle) /],
  ['create image', /^(resolveImage|imageRules) /],
  ['create video (no media data)', /^(resolveVideo|videoRules) /],
];
const WINDOW_US = 250_000;

function label(frame: CallFrame): string {
  const file = frame.url.replace(/^file:\/\//, '').replace(/^.*\/(src|dist|node_modules)\//, '$1/');
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
}

async function main(): Promise<void> {
  const file = process.argv[2];
  if (file === undefined) throw new Error('usage: profile-summary.ts <file.cpuprofile> [--top=N]');
  const top = Number(process.argv.find((arg) => arg.startsWith('--top='))?.slice(6) ?? 12);
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stepOf = new Map<number, string>();
  const stepFor = (id: number): string => {
    const known = stepOf.get(id);
    if (known !== undefined) return known;
    let step = 'other (GC, runtime, libraries)';
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const url = byId.get(at)?.callFrame.url ?? '';
      const hit = STEPS.find(([, pattern]) => pattern.test(url));
      if (hit) {
        step = hit[0];
        break;
      }
    }
    stepOf.set(id, step);
    return step;
  };

  // Phases: each window of the profile is given to the phase whose marker it holds most of.
  interface Phase {
    busyUs: number;
    windows: number;
    steps: Map<string, number>;
    self: Map<string, number>;
  }
  const phases = new Map<string, Phase>();
  const phaseFor = (id: number): string | undefined => {
    if (markerOf.has(id)) return markerOf.get(id);
    let found: string | undefined;
    for (let at: number | undefined = id; at !== undefined && found === undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame) found = PHASES.find(([, marker]) => marker.test(`${frame.functionName} ${frame.url}`))?.[0];
    }
    markerOf.set(id, found);
    return found;
  };
  const markerOf = new Map<number, string | undefined>();
  let time = 0;
  let window: { samples: [number, number][]; votes: Map<string, number> } = { samples: [], votes: new Map() };
  const close = (): void => {
    const votes = [...window.votes].sort((a, b) => b[1] - a[1]);
    const name = votes[0]?.[0] ?? 'no create (GET /healthz, start-up)';
    let phase = phases.get(name);
    if (phase === undefined) {
      phase = { busyUs: 0, windows: 0, steps: new Map(), self: new Map() };
      phases.set(name, phase);
    }
    phase.windows += 1;
    for (const [id, delta] of window.samples) {
      const node = byId.get(id);
      if (node === undefined) continue;
      phase.busyUs += delta;
      const step = stepFor(id);
      phase.steps.set(step, (phase.steps.get(step) ?? 0) + delta);
      const name = label(node.callFrame);
      phase.self.set(name, (phase.self.get(name) ?? 0) + delta);
    }
    window = { samples: [], votes: new Map() };
  };
  let windowEnd = WINDOW_US;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    time += delta;
    if (time > windowEnd) {
      close();
      windowEnd += WINDOW_US;
    }
    const node = byId.get(id);
    if (node === undefined || IDLE.has(node.callFrame.functionName)) return;
    window.samples.push([id, delta]);
    const phase = phaseFor(id);
    if (phase !== undefined) window.votes.set(phase, (window.votes.get(phase) ?? 0) + 1);
  });
  close();

  for (const [name, phase] of phases) {
    process.stdout.write(`\n## ${name}: ${phase.windows} windows of ${WINDOW_US / 1000} ms, main thread busy ${(phase.busyUs / 1e6).toFixed(2)} s\n\n`);
    process.stdout.write('| step | share of busy |\n|---|---:|\n');
    for (const [step, us] of [...phase.steps].sort((a, b) => b[1] - a[1])) {
      process.stdout.write(`| ${step} | ${((100 * us) / phase.busyUs).toFixed(1)}% |\n`);
    }
    process.stdout.write('\n| function (self time) | share |\n|---|---:|\n');
    for (const [fn, us] of [...phase.self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(`| ${fn} | ${((100 * us) / phase.busyUs).toFixed(1)}% |\n`);
    }
  }
}

await main();

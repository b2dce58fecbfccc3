/**
 * The CI guard's floors (`npm run bench -- --guard`, run by .ci/run): each phase's ratio to the
 * ceiling of the same run, by server CPU per request (the ceiling's µs over the phase's), must
 * stay above about a third of that ratio in the latest full run documented in docs/benchmarks.md. So loose a floor does not flake on a busy machine (the
 * ratios of one run swing by tens of percent with the machine's load), and still catches a
 * regression of the kind that made a data-URL create read its key's whole backlog (from ~19%
 * of the ceiling to under 1%).
 */
export interface Floor {
  /** The phase's name in the bench's table (its row). */
  readonly phase: string;
  /** Its ratio to the ceiling (by server CPU per request) in the documented full run. */
  readonly documented: number;
  /** The least such ratio the guard accepts. */
  readonly floor: number;
}

const third = (documented: number): number => Math.round((documented / 3) * 1000) / 1000;

/**
 * From the full run of docs/benchmarks.md ("Latest run"): the ceiling's server CPU per request
 * over the phase's. The data-URL creates keep the lowest figure of the recent full runs instead
 * (the run before: 1.6% and 1.1%): their cost is mostly file operations, which swing several
 * times with the disk's load (a guard run at 1.5% against the latest run's 4.2%).
 */
const DOCUMENTED: ReadonlyArray<readonly [string, number]> = [
  ['floor: GET /healthz (framework + hooks only)', 0.62],
  ['create video (4 models, no media data)', 0.25],
  ['create video (data URLs, 0.3 KB and 120 KB)', 0.016],
  ['create image (2 models)', 0.23],
  ['poll video, 10,000 tasks stored', 0.54],
  ['poll image, 10,000 tasks stored', 0.56],
  ['poll video, 200 running (50 processing, progress moving; the rest queued), sqlite', 0.55],
  ['backlog: create video with data URLs, no backlog at start', 0.011],
  ['backlog: create video with data URLs, 10,000 queued for the key', 0.011],
  ['backlog: poll video, 10,000 queued for the key', 0.25],
];

export const FLOORS: readonly Floor[] = DOCUMENTED.map(([phase, documented]) => ({ phase, documented, floor: third(documented) }));

/**
 * Phases read against another phase of the same run rather than the ceiling: a data-URL create
 * with 10,000 tasks of its key queued against the same create with none. Its cost must not
 * grow with the backlog (the goal is within 1.5x); the floor, a third, absorbs a busy machine
 * (the two phases run one after the other, and file operations, most of such a create's cost,
 * vary most) and still catches a create that reads its key's backlog.
 */
export interface RelativeFloor {
  readonly phase: string;
  readonly against: string;
  readonly floor: number;
}

export const RELATIVE_FLOORS: readonly RelativeFloor[] = [
  // Polls of running tasks are answered from their bodies until the task changes (goal: within
  // 1.5x of a final task's poll); a poll that reads the store at every request is 2-3x.
  {
    phase: 'poll video, 200 running (50 processing, progress moving; the rest queued), sqlite',
    against: 'poll video, 10,000 tasks stored',
    floor: 0.4,
  },
  {
    phase: 'backlog: create video with data URLs, 10,000 queued for the key',
    against: 'backlog: create video with data URLs, no backlog at start',
    floor: 1 / 3,
  },
];

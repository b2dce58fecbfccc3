/**
 * The CI guard's floors (`npm run bench -- --guard`, run by .ci/run): each phase's ratio to the
 * ceiling by server CPU per request (the median of its pairs of windows, each against a window of
 * the ceiling just before it: bench/run.ts, measure) must stay above half of that ratio in the
 * guard runs documented in docs/benchmarks.md ("The CI guard"). Paired windows cancel most of
 * this machine's drift (the ceiling's own CPU per request moves between 21 and 41 µs from one
 * second to the next), which a ceiling measured minutes before a phase did not; half still
 * absorbs what is left (a poll phase once came out at 41% in a run whose other polls sat at
 * 62-65%) and catches a regression of the kind that made a data-URL create read its key's whole
 * backlog (from ~19% of the ceiling to under 1%), or a create or poll that costs twice as much.
 */
export interface Floor {
  /** The phase's name in the bench's table (its row). */
  readonly phase: string;
  /** Its ratio to the ceiling (by server CPU per request) in the documented guard runs. */
  readonly documented: number;
  /** The least such ratio the guard accepts. */
  readonly floor: number;
}

/**
 * The median of three guard runs of 2026-11-29 (docs/benchmarks.md, "The CI guard"). The
 * data-URL creates keep the floors they had, a third of the lowest figure of the earlier full
 * runs (1.6% and 1.1%): their cost is mostly file operations, which swing several times with the
 * disk's load (1.4% to 4.9% in those three runs).
 */
/** Each phase: its documented ratio, and what the floor divides it by (2: half; 3: a third). */
const DOCUMENTED: ReadonlyArray<readonly [string, number, 2 | 3]> = [
  ['floor: GET /healthz (framework + hooks only)', 0.65, 2],
  ['create video (4 models, no media data)', 0.31, 2],
  ['create video (data URLs, 0.3 KB and 120 KB)', 0.016, 3],
  ['create image (2 models)', 0.34, 2],
  ['poll video, 10,000 tasks stored', 0.62, 2],
  ['poll image, 10,000 tasks stored', 0.62, 2],
  ['poll video, 200 running (50 processing, progress moving; the rest queued), sqlite', 0.59, 2],
  ['backlog: create video with data URLs, no backlog at start', 0.011, 3],
  ['backlog: create video with data URLs, 10,000 queued for the key', 0.011, 3],
  ['backlog: poll video, 10,000 queued for the key', 0.67, 2],
];

export const FLOORS: readonly Floor[] = DOCUMENTED.map(([phase, documented, divisor]) => ({
  phase,
  documented,
  floor: Math.round((documented / divisor) * 1000) / 1000,
}));

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
  // 1.5x of a final task's poll, 0.67; 0.88-1.01 in the documented runs); a poll that reads the
  // store at every request is 2-3x.
  {
    phase: 'poll video, 200 running (50 processing, progress moving; the rest queued), sqlite',
    against: 'poll video, 10,000 tasks stored',
    floor: 0.5,
  },
  {
    phase: 'backlog: create video with data URLs, 10,000 queued for the key',
    against: 'backlog: create video with data URLs, no backlog at start',
    floor: 1 / 3,
  },
];

import type { TestProjectInlineConfiguration } from 'vitest/config';

/**
 * Which spec files run where (vitest.config.ts builds its projects from these lists; docs/ci.md
 * says why). Paths are relative to the repository root.
 */

/** The interface suite's validation tables: every case is one request, and none needs a render. */
export const VALIDATION_CONFORMANCE = ['test/conformance/video-models.test.ts', 'test/conformance/image-models.test.ts', 'test/conformance/envelopes.test.ts'];

/** The interface suite's task lifecycles, with real renders: the file the other topologies rerun. */
export const LIFECYCLE_CONFORMANCE = 'test/conformance/lifecycle.test.ts';

/**
 * Soak and kill specs: SIGKILLed processes, loads of tasks, several child processes at once. They
 * run once, one file at a time (the `system` project), so that none of them measures or times out
 * against another one's load.
 */
export const SYSTEM_SPECS = [
  'test/crash-load.test.ts',
  'test/crash-restart.test.ts',
  'test/growth.test.ts',
  'test/overload.test.ts',
  'test/pg-dead-worker-jobs.test.ts',
  'test/scale-out.test.ts',
  'test/scale-out-s3.test.ts',
  'test/upstream-crash.test.ts',
  'test/upstream-vendors-crash.test.ts',
  'test/usage-exactly-once.test.ts',
  'test/webhooks-crash.test.ts',
];

/**
 * What depends on the Node release line, run again on the second line (`npm run test:node-line`):
 * the SQLite driver seam (src/store/sqlite-driver.ts picks node:sqlite or better-sqlite3 by line)
 * and every spec that opens SQLite through it, directly or through a helper
 * (test/node-line.test.ts fails when one is missing here), the store specs (on SQLite there),
 * a crash and restart of the real process, and one pass of the interface suite's lifecycles.
 */
export const NODE_LINE_SPECS = [
  // The seam itself, and the specs that open SQLite through it (openSqlite; helpers/ledger.ts).
  'test/sqlite-driver.test.ts',
  'test/admin-api.test.ts',
  'test/api-keys.test.ts',
  'test/channel-slots.test.ts',
  'test/cli-usage.test.ts',
  'test/client-usage.test.ts',
  'test/console-usage-browser.test.ts',
  'test/console-models-browser.test.ts',
  'test/event-streams-keys.test.ts',
  'test/final-bodies.test.ts',
  'test/growth.test.ts',
  'test/input-bytes.test.ts',
  'test/keys.test.ts',
  'test/stored-inputs.test.ts',
  'test/upstream-rate-waits.test.ts',
  'test/upstream-scrub.test.ts',
  'test/usage-exactly-once.test.ts',
  'test/usage-http.test.ts',
  'test/usage-store.test.ts',
  'test/frontdoors.test.ts',
  'test/grafana-dashboard.test.ts',
  'test/limits-across-processes.test.ts',
  'test/money-bounds.test.ts',
  'test/small-refusals.test.ts',
  'test/usage-export.test.ts',
  'test/webhooks-revoked-key.test.ts',
  // The store specs (helpers/stores.ts: every backend, so SQLite on this line).
  'test/fairness.test.ts',
  'test/insert-guard.test.ts',
  'test/sqlite-temp-files.test.ts',
  'test/secrets-rotate.test.ts',
  'test/store-sql.test.ts',
  'test/sweep-turn.test.ts',
  'test/task-ops-store.test.ts',
  'test/task-store.test.ts',
  'test/webhooks-store.test.ts',
  'test/worker-pool.test.ts',
  // The process killed and started again on its own database file.
  'test/crash-restart.test.ts',
  // One lifecycle pass of the interface suite: renders, outputs and expiry on this line's store.
  LIFECYCLE_CONFORMANCE,
  // The guard that keeps this list whole.
  'test/node-line.test.ts',
];

const CONFORMANCE = 'test/conformance/**/*.test.ts';

export interface ProjectChoice {
  /** `npm run test:node-line` (MEDIAGATE_TEST_NODE_LINE=1): the second Node line's subset only. */
  readonly nodeLine: boolean;
  /** SQLite among MEDIAGATE_TEST_BACKENDS: the interface suite runs on it in `main`. */
  readonly sqlite: boolean;
  /** PostgreSQL selected and reachable: the lifecycles run on it too. */
  readonly postgres: boolean;
}

/**
 * The Vitest projects. `npm test`: `main` (every spec but the soak and kill ones, the interface
 * suite on SQLite), `system` (those, one file at a time, after the others) and
 * `conformance-postgres` (the lifecycles on PostgreSQL: validation answers before the store is
 * asked, so its tables run once). `npm run test:node-line`: `node-line` and `node-line-system`,
 * the same split over NODE_LINE_SPECS.
 */
export function vitestProjects(choice: ProjectChoice): TestProjectInlineConfiguration[] {
  if (choice.nodeLine) {
    return [
      { extends: true, test: { name: 'node-line', include: NODE_LINE_SPECS.filter((file) => !SYSTEM_SPECS.includes(file)) } },
      { extends: true, test: { name: 'node-line-system', include: NODE_LINE_SPECS.filter((file) => SYSTEM_SPECS.includes(file)), fileParallelism: false } },
    ];
  }
  const projects: TestProjectInlineConfiguration[] = [
    { extends: true, test: { name: 'main', include: ['test/**/*.test.ts'], exclude: [...SYSTEM_SPECS, ...(choice.sqlite ? [] : [CONFORMANCE])] } },
    { extends: true, test: { name: 'system', include: SYSTEM_SPECS, fileParallelism: false } },
  ];
  if (choice.postgres) {
    projects.push({ extends: true, test: { name: 'conformance-postgres', include: [LIFECYCLE_CONFORMANCE], env: { MEDIAGATE_TEST_BACKEND: 'postgres' } } });
  }
  return projects;
}

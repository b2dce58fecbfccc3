import { availableParallelism } from 'node:os';
import { defineConfig, type ViteUserConfig } from 'vitest/config';
import { postgresAvailability, selectedBackends } from './test/helpers/postgres.js';
import { vitestProjects } from './test/helpers/projects.js';

// The interface (conformance) suite runs once per backend, parametrised by the environment its
// servers are started with (test/helpers/server.ts), not copied. The store and worker specs
// parametrise themselves over STORE_BACKENDS. MEDIAGATE_TEST_BACKENDS=sqlite,postgres chooses;
// PostgreSQL specs skip with a message when no server is reachable (and fail under CI). Which
// file runs in which project: test/helpers/projects.ts.
export default defineConfig(async (): Promise<ViteUserConfig> => {
  const postgres = await postgresAvailability();
  return {
    test: {
      // The S3 specs' server, started when none is named and one can run here (test/setup/s3-server.ts);
      // the PostgreSQL template database every test database is cloned from (test/setup/postgres-template.ts);
      // dist/ built again when src/ is newer, since the specs run the CLI from it (test/setup/dist-build.ts).
      globalSetup: ['test/setup/s3-server.ts', 'test/setup/postgres-template.ts', 'test/setup/dist-build.ts'],
      testTimeout: 60_000,
      hookTimeout: 60_000,
      pool: 'forks',
      // Files run in parallel, at least two at a time. Vitest's default is one fewer than the
      // cores, which is one file at a time on a 2-core machine, though most spec files spend
      // their time waiting on servers, child processes and Chromium rather than on a core.
      maxWorkers: Math.max(2, availableParallelism()),
      projects: vitestProjects({
        nodeLine: process.env['MEDIAGATE_TEST_NODE_LINE'] === '1',
        sqlite: selectedBackends().includes('sqlite'),
        postgres: postgres.enabled,
      }),
    },
  };
});

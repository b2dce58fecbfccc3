import { availableParallelism } from 'node:os';
import { defineConfig, type TestProjectInlineConfiguration, type ViteUserConfig } from 'vitest/config';
import { postgresAvailability, selectedBackends } from './test/helpers/postgres.js';

// The interface (conformance) suite runs once per backend, parametrised by the environment its
// servers are started with (test/helpers/server.ts), not copied. The store and worker specs
// parametrise themselves over STORE_BACKENDS. MEDIAGATE_TEST_BACKENDS=sqlite,postgres chooses;
// PostgreSQL specs skip with a message when no server is reachable (and fail under CI).
export default defineConfig(async (): Promise<ViteUserConfig> => {
  const postgres = await postgresAvailability();
  const conformance = 'test/conformance/**/*.test.ts';
  const projects: TestProjectInlineConfiguration[] = [
    {
      extends: true,
      test: { name: 'main', include: ['test/**/*.test.ts'], exclude: selectedBackends().includes('sqlite') ? [] : [conformance] },
    },
  ];
  if (postgres.enabled) {
    projects.push({ extends: true, test: { name: 'conformance-postgres', include: [conformance], env: { MEDIAGATE_TEST_BACKEND: 'postgres' } } });
  }
  return {
    test: {
      // The S3 specs' server, started when none is named and one can run here (test/setup/s3-server.ts).
      globalSetup: ['test/setup/s3-server.ts'],
      testTimeout: 60_000,
      hookTimeout: 60_000,
      pool: 'forks',
      // Files run in parallel, at least two at a time. Vitest's default is one fewer than the
      // cores, which is one file at a time on a 2-core machine, though most spec files spend
      // their time waiting on servers, child processes and Chromium rather than on a core.
      maxWorkers: Math.max(2, availableParallelism()),
      projects,
    },
  };
});

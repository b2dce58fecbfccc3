import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Vitest's global setup for the S3 specs: the real S3 server (`.ci/s3-server`, Ceph's RADOS
 * Gateway with objects in memory), so that `npm test` alone runs them wherever they can run.
 * Nothing is started when a server is already named (`.ci/run` starts one for all its legs, or a
 * developer did with `eval "$(.ci/s3-server start)"`). Otherwise it is started when the gateway
 * is installed, and under CI, where the script installs Debian's packages first; elsewhere the
 * S3 specs skip with their message (test/helpers/s3.ts). The variables it exports reach the test
 * processes, which start after this; the server is stopped when the run ends.
 */
const SCRIPT = fileURLToPath(new URL('../../.ci/s3-server', import.meta.url));

function installed(command: string): boolean {
  return (process.env['PATH'] ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

export default function setup(): (() => void) | undefined {
  const env = process.env;
  if (env['MEDIAGATE_TEST_S3_ENDPOINT']) return undefined;
  if (!env['CI'] && !installed('radosgw')) return undefined;
  const printed = execFileSync(SCRIPT, ['start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  for (const line of printed.split('\n')) {
    const match = /^export (MEDIAGATE_TEST_S3_[A-Z_]+)='([^']*)'$/.exec(line);
    if (match) env[match[1] ?? ''] = match[2];
  }
  const dir = env['MEDIAGATE_TEST_S3_DIR'];
  if (!env['MEDIAGATE_TEST_S3_ENDPOINT'] || !dir) throw new Error(`.ci/s3-server start printed no endpoint:\n${printed}`);
  return () => {
    execFileSync(SCRIPT, ['stop', dir], { stdio: 'inherit' });
  };
}

// `npm test`'s checks before the specs: the type-check and the lint (ESLint, then Prettier) side by
// side. Each is one process on one core most of the time, so on two cores they take about as long
// as the longer of them instead of their sum. Each one's output is printed whole when it ends (not
// interleaved), and the script fails when either fails, so `npm test` stops before the specs.
import { spawn } from 'node:child_process';

const checks = [
  ['typecheck', ['run', 'typecheck']],
  ['lint', ['run', 'lint']],
];

const results = await Promise.all(
  checks.map(
    ([name, args]) =>
      new Promise((resolve) => {
        const started = Date.now();
        const child = spawn('npm', args, { stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout.on('data', (chunk) => (output += chunk));
        child.stderr.on('data', (chunk) => (output += chunk));
        let done = false;
        const end = (ok, how) => {
          if (done) return;
          done = true;
          process.stdout.write(`${output}== ${name}: ${how} in ${Math.round((Date.now() - started) / 1000)} s\n`);
          resolve({ name, ok });
        };
        child.on('error', (error) => end(false, `failed to start (${error.message})`));
        child.on('close', (code, signal) => end(code === 0, code === 0 ? 'passed' : `failed (${signal ?? `exit ${code}`})`));
      }),
  ),
);

const failed = results.filter((result) => !result.ok).map((result) => result.name);
if (failed.length > 0) {
  console.error(`npm test: ${failed.join(' and ')} failed`);
  process.exit(1);
}

/**
 * `mediagate secrets rotate|status`: the secret that signs output and published-input URLs
 * (storage/signing.ts). Like `keys`, the commands open the server's store from the same
 * configuration and work beside a running service, which picks a rotation up within
 * MEDIAGATE_SIGNING_REFRESH_S. The secrets themselves are never printed.
 */
import type { Command } from 'commander';
import { CliError, withStore } from './keys.js';

const when = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Longest grace accepted: a year covers any output TTL one would want old URLs to live for. */
const MAX_GRACE_S = 365 * 86_400;

function parseGrace(raw: string): number {
  if (!/^\d{1,9}$/.test(raw) || Number(raw) > MAX_GRACE_S)
    throw new CliError(`--grace must be whole seconds from 0 to ${MAX_GRACE_S}, got '${raw.slice(0, 32)}'`);
  return Number(raw);
}

export function registerSecretCommands(program: Command): void {
  const secrets = program.command('secrets').description('the URL signing secret (output and published-input URLs); never printed');

  secrets
    .command('rotate')
    .description(
      'replace the URL signing secret; URLs signed with the old one keep working for --grace seconds, then answer 403 invalid_signature (running servers pick the new secret up within MEDIAGATE_SIGNING_REFRESH_S, default 10 s)',
    )
    .option(
      '--grace <seconds>',
      'how long the old secret still verifies: 0 (default) after a leak; the output TTL (MEDIAGATE_OUTPUT_TTL_S) for a planned rotation',
      '0',
    )
    .action(async (options: { grace: string }) => {
      const graceS = parseGrace(options.grace);
      const { rotateSigningSecret } = await import('../service-factory.js');
      const rotation = await withStore((store) => rotateSigningSecret(store, graceS * 1000), true);
      const old =
        graceS === 0
          ? 'URLs signed with the old secret stop working now'
          : `URLs signed with the old secret keep working until ${when(rotation.previousUntilMs)} (${graceS} s)`;
      process.stdout.write(
        `Rotated the URL signing secret at ${when(rotation.rotatedAtMs)}. New URLs are signed with the new secret; ${old}.\n` +
          `Running servers and workers pick it up within MEDIAGATE_SIGNING_REFRESH_S (default 10 s).\n`,
      );
    });

  secrets
    .command('status')
    .description('when the current secret was made, and whether the previous one is still accepted (never the secrets)')
    .option('--json', 'print {exists, createdAt, previousUntil} as JSON (ISO times or null)')
    .action(async (options: { json?: boolean }) => {
      const { readSigningState } = await import('../service-factory.js');
      const state = await withStore((store) => readSigningState(store), true);
      const now = Date.now();
      const createdAt = state?.createdAtMs === undefined ? null : when(state.createdAtMs);
      const previousUntil = state?.previous && state.previous.untilMs > now ? when(state.previous.untilMs) : null;
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ exists: state !== undefined, createdAt, previousUntil })}\n`);
        return;
      }
      if (!state) {
        process.stdout.write('No URL signing secret yet: the server makes one at its first start.\n');
        return;
      }
      process.stdout.write(
        `current secret: created ${createdAt ?? 'at the first start (before rotation was recorded)'}\n` +
          `previous secret: ${previousUntil ? `accepted until ${previousUntil}` : 'none accepted'}\n`,
      );
    });
}

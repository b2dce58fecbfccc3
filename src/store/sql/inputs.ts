import { bigint, operation } from '../dialect.js';

/*
 * Stored input bytes per key (migration 10): `key_inputs` holds each key's total over its queued
 * and processing tasks, kept in the same transactions as the tasks (reserved by the insert,
 * given back by the trigger `tasks_inputs_release` when a task ends), so the per-key limit is
 * one row read and one guarded write, whatever the key's backlog.
 */

/** Gives back a reservation whose task was not inserted (its idempotency key was held). */
export const releaseInputBytes = operation<{ owner: string; bytes: number }>(
  'release-input-bytes',
  () => `UPDATE key_inputs SET bytes = bytes - @bytes WHERE owner = @owner`,
);

/** What an owner's queued and processing tasks hold in stored inputs (no row: nothing). */
export const keyInputBytes = operation<{ owner: string }, { n: number | string }>(
  'key-input-bytes',
  () => `SELECT bytes AS n FROM key_inputs WHERE owner = @owner`,
);

/**
 * Adds the bytes of a copy published for an upstream (ChannelMedia.publish) to its task's
 * `input_bytes`, while the task is active: the trigger of migration 10 then gives them back with
 * everything else the task holds, in the transaction that ends it. Returns the owner; no row
 * when the task has already ended (nothing is counted, and its copy goes with the inputs sweep).
 */
export const addTaskInputBytes = operation<{ id: string; bytes: number }, { owner: string }>(
  'add-task-input-bytes',
  (dialect) => `UPDATE tasks SET input_bytes = input_bytes + CAST(@bytes AS ${bigint(dialect)})
      WHERE id = @id AND status IN ('queued', 'processing') RETURNING owner`,
);

/** The same bytes on the owner's total, in the same transaction as addTaskInputBytes; never refused by the limit. */
export const addKeyInputBytes = operation<{ owner: string; bytes: number }>(
  'add-key-input-bytes',
  (dialect) => `INSERT INTO key_inputs (owner, bytes) VALUES (@owner, CAST(@bytes AS ${bigint(dialect)}))
  ON CONFLICT (owner) DO UPDATE SET bytes = key_inputs.bytes + excluded.bytes`,
);

import { operation } from '../dialect.js';
import type { Int } from '../rows.js';

/*
 * A disabled or revoked key's webhooks stop (docs/guides/webhooks.md "When a key is disabled or
 * revoked"): its pending deliveries, retries included, end as `failed` with a `key_revoked`
 * error in the statement's transaction that disables or revokes the key, and the sender checks
 * the key again before each attempt (a delivery announced or claimed meanwhile is ended there,
 * not sent). Enabling the key again makes the deliveries it ended due at once. The prefix of
 * `last_error` is what marks them: no other failure starts with it.
 */

export const KEY_REVOKED_ERROR = "key_revoked: the endpoint's API key is disabled or revoked; no further attempt is made";

/** Every pending delivery of a key (in flight too: its result is then not written), ended. */
export const endKeyDeliveries = operation<{ owner: string; now: number; error: string }>(
  'end-key-deliveries',
  () => `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease_owner = NULL, last_error = @error, updated_at = @now
       WHERE owner = @owner AND status = 'pending'`,
);

/** The same for every key disabled or revoked (keys dropped from the environment at start). */
export const endBlockedKeysDeliveries = operation<{ now: number; error: string }>(
  'end-blocked-keys-deliveries',
  () => `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease_owner = NULL, last_error = @error, updated_at = @now
       WHERE status = 'pending' AND owner IN (SELECT id FROM api_keys WHERE disabled OR revoked_at IS NOT NULL)`,
);

/** The deliveries a disable ended, due again now (the key is enabled again). */
export const resumeKeyDeliveries = operation<{ owner: string; now: number }>(
  'resume-key-deliveries',
  () => `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = @now, lease_owner = NULL, updated_at = @now
       WHERE owner = @owner AND status = 'failed' AND substr(last_error, 1, 12) = 'key_revoked:'`,
);

/** Whether a key may no longer be delivered to (disabled, revoked); no row: a key that is gone. */
export const keyBlocksDeliveries = operation<{ owner: string }, { blocked: Int }>(
  'key-blocks-deliveries',
  () => `SELECT CASE WHEN disabled OR revoked_at IS NOT NULL THEN 1 ELSE 0 END AS blocked FROM api_keys WHERE id = @owner`,
);

/**
 * A claimed delivery whose key is blocked, ended without an attempt: its claim's attempt is
 * given back (none was made), so a key enabled again gets its full schedule. Fenced as a settle.
 */
export const endClaimedDelivery = operation<{ id: string; lease: string; attempts: number; now: number; error: string }>(
  'end-claimed-delivery',
  () => `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease_owner = NULL, attempts = attempts - 1,
            last_error = @error, updated_at = @now
       WHERE id = @id AND lease_owner = @lease AND attempts = @attempts AND status = 'pending'`,
);

UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, lease_owner = NULL, updated_at = ?
       WHERE owner = ? AND status = 'failed' AND substr(last_error, 1, 12) = 'key_revoked:'

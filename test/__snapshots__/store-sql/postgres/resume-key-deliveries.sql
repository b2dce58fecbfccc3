UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $1, lease_owner = NULL, updated_at = $1
       WHERE owner = $2 AND status = 'failed' AND substr(last_error, 1, 12) = 'key_revoked:'

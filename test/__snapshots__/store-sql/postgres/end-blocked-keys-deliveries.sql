UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease_owner = NULL, last_error = $1, updated_at = $2
       WHERE status = 'pending' AND owner IN (SELECT id FROM api_keys WHERE disabled OR revoked_at IS NOT NULL)

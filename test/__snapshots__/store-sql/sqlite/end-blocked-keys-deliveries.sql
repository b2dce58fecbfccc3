UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease_owner = NULL, last_error = ?, updated_at = ?
       WHERE status = 'pending' AND owner IN (SELECT id FROM api_keys WHERE disabled OR revoked_at IS NOT NULL)

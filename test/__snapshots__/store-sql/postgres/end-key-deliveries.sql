UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease_owner = NULL, last_error = $1, updated_at = $2
       WHERE owner = $3 AND status = 'pending'

UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease_owner = NULL, attempts = attempts - 1,
            last_error = $1, updated_at = $2
       WHERE id = $3 AND lease_owner = $4 AND attempts = $5 AND status = 'pending'

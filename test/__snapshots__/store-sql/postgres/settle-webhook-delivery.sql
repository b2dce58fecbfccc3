UPDATE webhook_deliveries SET status = $1, next_attempt_at = $2, lease_owner = NULL,
            last_status_code = $3, last_error = $4, updated_at = $5
       WHERE id = $6 AND lease_owner = $7 AND attempts = $8 AND status = 'pending'

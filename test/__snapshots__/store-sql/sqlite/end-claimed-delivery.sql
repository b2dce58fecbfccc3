UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease_owner = NULL, attempts = attempts - 1,
            last_error = ?, updated_at = ?
       WHERE id = ? AND lease_owner = ? AND attempts = ? AND status = 'pending'

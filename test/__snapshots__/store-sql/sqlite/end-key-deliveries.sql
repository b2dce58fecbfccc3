UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease_owner = NULL, last_error = ?, updated_at = ?
       WHERE owner = ? AND status = 'pending'

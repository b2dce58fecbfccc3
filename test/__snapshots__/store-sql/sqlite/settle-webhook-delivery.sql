UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, lease_owner = NULL,
            last_status_code = ?, last_error = ?, updated_at = ?
       WHERE id = ? AND lease_owner = ? AND attempts = ? AND status = 'pending'

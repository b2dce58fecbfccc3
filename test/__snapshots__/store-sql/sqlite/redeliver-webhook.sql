UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, updated_at = ?
       WHERE id = ? AND endpoint_id = ? AND lease_owner IS NULL

UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $1, updated_at = $1
       WHERE id = $2 AND endpoint_id = $3 AND lease_owner IS NULL

UPDATE webhook_deliveries SET lease_owner = ?, next_attempt_at = ?, attempts = attempts + 1, updated_at = ?
       WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ?
                    ORDER BY next_attempt_at LIMIT ? )
   RETURNING id, endpoint_id, type, task_id, status, attempts, next_attempt_at, lease_owner, last_status_code, last_error, created_at, updated_at, payload

UPDATE webhook_deliveries SET lease_owner = $1, next_attempt_at = $2, attempts = attempts + 1, updated_at = $3
       WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= $3
                    ORDER BY next_attempt_at LIMIT $4 FOR UPDATE SKIP LOCKED)
   RETURNING id, endpoint_id, type, task_id, status, attempts, next_attempt_at, lease_owner, last_status_code, last_error, created_at, updated_at, payload

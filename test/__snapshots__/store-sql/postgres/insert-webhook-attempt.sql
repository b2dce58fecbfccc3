INSERT INTO webhook_attempts (delivery_id, endpoint_id, attempt, at, status_code, error, duration_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7)

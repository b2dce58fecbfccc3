INSERT INTO webhook_attempts (delivery_id, endpoint_id, attempt, at, status_code, error, duration_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?)

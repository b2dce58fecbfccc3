SELECT delivery_id, attempt, at, status_code, error, duration_ms FROM webhook_attempts
       WHERE endpoint_id = $1 AND delivery_id COLLATE "C" >= $2 AND delivery_id COLLATE "C" <= $3
    ORDER BY attempt

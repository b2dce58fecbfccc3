SELECT delivery_id, attempt, at, status_code, error, duration_ms FROM webhook_attempts
       WHERE endpoint_id = ? AND delivery_id COLLATE BINARY >= ? AND delivery_id COLLATE BINARY <= ?
    ORDER BY attempt

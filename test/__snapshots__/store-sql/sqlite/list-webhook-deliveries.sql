SELECT id, endpoint_id, type, task_id, status, attempts, next_attempt_at, lease_owner, last_status_code, last_error, created_at, updated_at FROM webhook_deliveries
       WHERE endpoint_id = ? AND id COLLATE BINARY < ?
    ORDER BY id COLLATE BINARY DESC LIMIT ?

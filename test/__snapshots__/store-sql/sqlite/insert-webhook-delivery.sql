INSERT INTO webhook_deliveries (id, endpoint_id, owner, type, task_id, payload, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)

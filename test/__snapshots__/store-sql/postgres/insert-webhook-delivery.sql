INSERT INTO webhook_deliveries (id, endpoint_id, owner, type, task_id, payload, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $7, $7)

SELECT id, kind, model, owner, status, progress, created_at, started_at, completed_at, error, outputs, attempt, version, usage_seconds, usage_images, cost FROM tasks
       WHERE announced = 0 AND status IN ('completed', 'failed', 'cancelled')
    ORDER BY completed_at LIMIT $1 FOR UPDATE SKIP LOCKED

SELECT id, kind, model, owner, status, progress, created_at, started_at, completed_at, error, outputs, attempt, version, usage_seconds, usage_images, cost, params FROM tasks
       WHERE owner = ? AND kind = ? AND id COLLATE BINARY > ?
    ORDER BY id COLLATE BINARY ASC LIMIT ?

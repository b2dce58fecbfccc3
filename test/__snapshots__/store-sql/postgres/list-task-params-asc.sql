SELECT id, kind, model, owner, status, progress, created_at, started_at, completed_at, error, outputs, attempt, version, usage_seconds, usage_images, cost, params FROM tasks
       WHERE owner = $1 AND kind = $2 AND id COLLATE "C" > $3
    ORDER BY id COLLATE "C" ASC LIMIT $4

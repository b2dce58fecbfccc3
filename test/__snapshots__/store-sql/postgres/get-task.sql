SELECT id, kind, model, owner, status, progress, created_at, started_at, completed_at, error, outputs, attempt, version, usage_seconds, usage_images, cost FROM tasks WHERE id = $1 AND owner = $2

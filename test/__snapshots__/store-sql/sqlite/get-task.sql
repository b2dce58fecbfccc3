SELECT id, kind, model, owner, status, progress, created_at, started_at, completed_at, error, outputs, attempt, version FROM tasks WHERE id = ? AND owner = ?

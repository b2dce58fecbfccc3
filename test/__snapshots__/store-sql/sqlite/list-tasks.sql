SELECT id, kind, model, owner, status, progress, created_at, started_at, completed_at, error, outputs, attempt, version, usage_seconds, usage_images, cost FROM tasks
       WHERE owner = ? AND kind = ? AND id COLLATE BINARY < ?
         AND (? = '' OR status = ?) AND (? = '' OR model = ?)
    ORDER BY id COLLATE BINARY DESC LIMIT ?

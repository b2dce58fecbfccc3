UPDATE tasks AS t SET status = 'completed', progress = 100, version = t.version + 1, completed_at = ?, outputs = ?, lease_expires_at = NULL,
          usage_seconds = ?, usage_images = ?, cost = ? WHERE t.id = ? AND t.status = 'processing' AND t.attempt = ?

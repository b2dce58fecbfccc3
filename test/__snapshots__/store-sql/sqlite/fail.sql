UPDATE tasks AS t SET status = 'failed', completed_at = ?, error = ?, lease_expires_at = NULL, version = t.version + 1, usage_seconds = 0, usage_images = 0, cost = 0
      WHERE t.id = ? AND t.status = 'processing' AND t.attempt = ?

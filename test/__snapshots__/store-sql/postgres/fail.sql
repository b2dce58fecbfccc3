UPDATE tasks AS t SET status = 'failed', completed_at = $1, error = $2, lease_expires_at = NULL, version = t.version + 1, usage_seconds = 0, usage_images = 0, cost = 0
      WHERE t.id = $3 AND t.status = 'processing' AND t.attempt = $4

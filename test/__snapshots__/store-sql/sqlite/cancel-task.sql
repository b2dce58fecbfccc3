UPDATE tasks SET status = 'cancelled', completed_at = ?, lease_expires_at = NULL, attempt = attempt + 1, version = version + 1, usage_seconds = 0, usage_images = 0, cost = 0
       WHERE id = ? AND owner = ? AND status IN ('queued', 'processing')
   RETURNING id, kind, model, owner, status, progress, created_at, started_at, completed_at, error, outputs, attempt, version, usage_seconds, usage_images, cost

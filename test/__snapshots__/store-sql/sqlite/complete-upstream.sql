UPDATE tasks AS t SET status = 'completed', progress = 100, completed_at = ?, outputs = ?,
             started_at = COALESCE(t.started_at, ?), upstream_state = NULL, next_check_at = NULL,
             version = t.version + 1, usage_seconds = ?, usage_images = ?, cost = ?, upstream_usage = ?
       WHERE t.id = ? AND t.attempt = ? AND t.channel <> 'sandbox' AND t.status IN ('queued', 'processing')

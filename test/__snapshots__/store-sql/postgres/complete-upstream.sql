UPDATE tasks AS t SET status = 'completed', progress = 100, completed_at = $1, outputs = $2,
             started_at = COALESCE(t.started_at, $3), upstream_state = NULL, next_check_at = NULL,
             version = t.version + 1, usage_seconds = $4, usage_images = $5, cost = $6, upstream_usage = $7
       WHERE t.id = $8 AND t.attempt = $9 AND t.channel <> 'sandbox' AND t.status IN ('queued', 'processing')

UPDATE tasks AS t SET status = 'failed', completed_at = ?, error = ?, upstream_state = NULL, next_check_at = NULL,
             version = t.version + 1, usage_seconds = 0, usage_images = 0, cost = 0
       WHERE t.id = ? AND t.attempt = ? AND t.channel <> 'sandbox' AND t.status IN ('queued', 'processing')

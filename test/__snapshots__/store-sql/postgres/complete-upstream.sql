UPDATE tasks AS t SET status = 'completed', progress = 100, completed_at = $1, outputs = $2,
             started_at = COALESCE(t.started_at, $3), upstream_state = NULL, next_check_at = NULL,
             version = t.version + 1
       WHERE t.id = $4 AND t.attempt = $5 AND t.channel <> 'sandbox' AND t.status IN ('queued', 'processing')

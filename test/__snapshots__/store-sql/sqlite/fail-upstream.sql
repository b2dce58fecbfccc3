UPDATE tasks AS t SET status = 'failed', completed_at = ?, error = ?, upstream_state = NULL, next_check_at = NULL,
             version = t.version + 1
       WHERE t.id = ? AND t.attempt = ? AND t.channel <> 'sandbox' AND t.status IN ('queued', 'processing')

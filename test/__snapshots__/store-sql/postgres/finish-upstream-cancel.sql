UPDATE tasks AS t SET upstream_state = NULL, next_check_at = NULL
       WHERE t.id = $1 AND t.upstream_state = 'cancelling' AND t.status IN ('cancelled', 'failed')

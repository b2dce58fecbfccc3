UPDATE tasks AS t SET upstream_state = 'cancelling', channel = $1, target = $2, upstream_id = $3,
             upstream_request_id = $4, next_check_at = $5, check_interval_ms = $6
       WHERE t.id = $7 AND t.status IN ('cancelled', 'failed') AND (t.upstream_state IS NULL OR t.upstream_state = 'cancelling')

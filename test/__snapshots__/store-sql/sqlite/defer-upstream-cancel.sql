UPDATE tasks AS t SET upstream_state = 'cancelling', channel = ?, target = ?, upstream_id = ?,
             upstream_request_id = ?, next_check_at = ?, check_interval_ms = ?
       WHERE t.id = ? AND t.status IN ('cancelled', 'failed') AND (t.upstream_state IS NULL OR t.upstream_state = 'cancelling')

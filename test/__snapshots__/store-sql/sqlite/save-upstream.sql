UPDATE tasks AS t
         SET status = ?, channel = ?, target = ?, upstream_state = ?,
             upstream_id = ?, upstream_request_id = ?, upstream_since = ?,
             next_check_at = ?, check_interval_ms = ?, progress = ?, started_at = ?, version = t.version + 1
       WHERE t.id = ? AND t.attempt = ? AND t.channel <> 'sandbox' AND t.status IN ('queued', 'processing')

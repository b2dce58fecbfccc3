UPDATE tasks AS t
         SET status = $1, channel = $2, target = $3, upstream_state = $4,
             upstream_id = $5, upstream_request_id = $6, upstream_since = $7,
             next_check_at = $8, check_interval_ms = $9, progress = $10, started_at = $11, version = t.version + 1
       WHERE t.id = $12 AND t.attempt = $13 AND t.channel <> 'sandbox' AND t.status IN ('queued', 'processing')

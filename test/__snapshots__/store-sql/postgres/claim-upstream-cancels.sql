WITH picked AS (SELECT id FROM tasks AS t WHERE t.upstream_state IS NOT NULL AND t.status IN ('cancelled', 'failed') AND t.next_check_at <= $1
                       ORDER BY t.next_check_at LIMIT $2 FOR UPDATE SKIP LOCKED)
      UPDATE tasks AS t SET upstream_state = 'cancelling', next_check_at = $3
       WHERE t.id IN (SELECT id FROM picked) AND t.upstream_state IS NOT NULL AND t.status IN ('cancelled', 'failed') AND t.next_check_at <= $1
   RETURNING id, model, channel, target, upstream_id, upstream_request_id, completed_at, check_interval_ms

WITH picked AS (SELECT id FROM tasks AS t WHERE t.upstream_state IS NOT NULL AND t.status IN ('cancelled', 'failed') AND t.next_check_at <= ?
                       ORDER BY t.next_check_at LIMIT ? )
      UPDATE tasks AS t SET upstream_state = 'cancelling', next_check_at = ?
       WHERE t.id IN (SELECT id FROM picked) AND t.upstream_state IS NOT NULL AND t.status IN ('cancelled', 'failed') AND t.next_check_at <= ?
   RETURNING id, model, channel, target, upstream_id, upstream_request_id, completed_at, check_interval_ms

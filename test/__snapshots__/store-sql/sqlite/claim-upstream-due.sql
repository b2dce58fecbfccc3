WITH picked AS (SELECT id FROM tasks AS t WHERE t.channel <> 'sandbox' AND t.status IN ('queued', 'processing') AND t.next_check_at <= ?
                       ORDER BY t.fair_rank, t.next_check_at LIMIT ? )
      UPDATE tasks AS t SET attempt = t.attempt + 1, next_check_at = ?
       WHERE t.id IN (SELECT id FROM picked) AND t.channel <> 'sandbox' AND t.status IN ('queued', 'processing') AND t.next_check_at <= ?
   RETURNING id, kind, model, owner, status, progress, created_at, started_at, params, attempt, channel, target,
  upstream_id, upstream_state, upstream_request_id, upstream_since, check_interval_ms

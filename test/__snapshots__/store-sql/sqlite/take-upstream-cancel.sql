UPDATE tasks AS t SET upstream_state = NULL, next_check_at = NULL
       WHERE t.id = ? AND t.status = 'cancelled' AND t.upstream_state IS NOT NULL AND t.upstream_state <> 'cancelling'
   RETURNING id, model, channel, target, upstream_id, upstream_request_id

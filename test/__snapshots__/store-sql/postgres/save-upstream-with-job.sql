WITH saved AS (UPDATE tasks AS t
         SET status = $1, channel = $2, target = $3, upstream_state = $4,
             upstream_id = $5, upstream_request_id = $6, upstream_since = $7,
             next_check_at = $8, check_interval_ms = $9, progress = $10, started_at = $11, version = t.version + 1
       WHERE t.id = $12 AND t.attempt = $13 AND t.channel <> 'sandbox' AND t.status IN ('queued', 'processing') RETURNING t.id, t.created_at, t.channel, t.owner, (position('"image":"https://' in t.params) > 0 OR position('"end_image":"https://' in t.params) > 0) AS fetches_inputs),
           renders AS (SELECT id, created_at, owner, 0 AS priority, fetches_inputs FROM saved WHERE channel = 'sandbox'),
           jobs AS (SELECT 1 FROM graphile_worker.add_jobs(
    ARRAY(SELECT ROW('mediagate_render', json_build_object('id', r.id), NULL, to_timestamp(r.created_at / 1000.0), NULL, r.id,
                      r.priority, CASE WHEN r.fetches_inputs THEN ARRAY['key:' || r.owner, 'fetch'] ELSE ARRAY['key:' || r.owner] END)::graphile_worker.job_spec
            FROM renders r),
    true))
      SELECT (SELECT count(*) FROM saved) AS n, (SELECT count(*) FROM jobs) AS added

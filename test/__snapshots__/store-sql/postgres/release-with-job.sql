WITH released AS (UPDATE tasks AS t SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, version = t.version + 1 WHERE t.id = $1 AND t.status = 'processing' AND t.attempt = $2 RETURNING t.id, t.created_at, t.owner, 0 AS priority, (position('"image":"https://' in t.params) > 0 OR position('"end_image":"https://' in t.params) > 0) AS fetches_inputs),
           jobs AS (SELECT 1 FROM graphile_worker.add_jobs(
    ARRAY(SELECT ROW('mediagate_render', json_build_object('id', r.id), NULL, to_timestamp(r.created_at / 1000.0), NULL, r.id,
                      r.priority, CASE WHEN r.fetches_inputs THEN ARRAY['key:' || r.owner, 'fetch'] ELSE ARRAY['key:' || r.owner] END)::graphile_worker.job_spec
            FROM released r),
    true))
      SELECT (SELECT count(*) FROM released) AS n, (SELECT count(*) FROM jobs) AS added

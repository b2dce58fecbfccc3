WITH reaper AS (SELECT pg_try_advisory_xact_lock(727012) AS locked),
           stranded AS (
             SELECT t.id, t.created_at, t.owner, 0 AS priority, (position('"image":"https://' in t.params) > 0 OR position('"end_image":"https://' in t.params) > 0) AS fetches_inputs FROM tasks t, reaper
              WHERE reaper.locked AND t.channel = 'sandbox'
                AND (t.status = 'queued' OR (t.status = 'processing' AND t.lease_expires_at < $1))
                AND NOT EXISTS (
               SELECT 1 FROM graphile_worker.jobs j
                WHERE j.key = t.id
                  AND ((j.locked_at IS NULL AND j.attempts < j.max_attempts)
                       OR j.locked_at > now() - $2 * interval '1 millisecond'))
              ORDER BY t.created_at
              LIMIT $3),
           jobs AS (SELECT 1 FROM graphile_worker.add_jobs(
    ARRAY(SELECT ROW('mediagate_render', json_build_object('id', r.id), NULL, to_timestamp(r.created_at / 1000.0), NULL, r.id,
                      r.priority, CASE WHEN r.fetches_inputs THEN ARRAY['key:' || r.owner, 'fetch'] ELSE ARRAY['key:' || r.owner] END)::graphile_worker.job_spec
            FROM stranded r),
    true))
      SELECT s.id, (SELECT count(*) FROM jobs) AS added FROM stranded s

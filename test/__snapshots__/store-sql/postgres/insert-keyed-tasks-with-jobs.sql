WITH n AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::text[])
               AS n(id, kind, model, owner, created_at, params, channel, key, hash)),
      keyed AS (
        INSERT INTO idempotency_keys (owner, key, kind, request_hash, task_id, created_at)
        SELECT owner, key, kind, hash, id, created_at FROM n WHERE key <> ''
        ON CONFLICT (owner, key) DO UPDATE SET kind = excluded.kind, request_hash = excluded.request_hash,
             task_id = excluded.task_id, created_at = excluded.created_at
             WHERE idempotency_keys.created_at < $10
        RETURNING task_id),
      inserted AS (
        INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params, channel, next_check_at)
        SELECT id, kind, model, owner, 'queued', created_at, '[]', params, channel,
               CASE WHEN channel = 'sandbox' THEN NULL ELSE created_at END FROM n
         WHERE key = '' OR id IN (SELECT task_id FROM keyed)
        RETURNING id, created_at, channel),
      renders AS (SELECT id, created_at FROM inserted WHERE channel = 'sandbox'),
      jobs AS (SELECT 1 FROM graphile_worker.add_jobs(
    ARRAY(SELECT ROW('mediagate_render', json_build_object('id', r.id), NULL, to_timestamp(r.created_at / 1000.0), NULL, r.id, NULL, NULL)::graphile_worker.job_spec
            FROM renders r),
    true))
  SELECT id, (SELECT count(*) FROM jobs) AS added FROM inserted

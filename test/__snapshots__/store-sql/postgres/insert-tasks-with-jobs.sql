WITH inserted AS (INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params, channel, next_check_at)
      SELECT n.id, n.kind, n.model, n.owner, 'queued', n.created_at, '[]', n.params, n.channel,
             CASE WHEN n.channel = 'sandbox' THEN NULL ELSE n.created_at END
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[])
             AS n(id, kind, model, owner, created_at, params, channel)
   RETURNING id, created_at, channel),
           renders AS (SELECT id, created_at FROM inserted WHERE channel = 'sandbox')
      SELECT count(*) AS n FROM graphile_worker.add_jobs(
    ARRAY(SELECT ROW('mediagate_render', json_build_object('id', r.id), NULL, to_timestamp(r.created_at / 1000.0), NULL, r.id, NULL, NULL)::graphile_worker.job_spec
            FROM renders r),
    true)

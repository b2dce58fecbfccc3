WITH inserted AS (INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params)
      SELECT n.id, n.kind, n.model, n.owner, 'queued', n.created_at, '[]', n.params
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[])
             AS n(id, kind, model, owner, created_at, params)
   RETURNING id, created_at) SELECT count(*) AS n FROM graphile_worker.add_jobs(
    ARRAY(SELECT ROW('mediagate_render', json_build_object('id', r.id), NULL, to_timestamp(r.created_at / 1000.0), NULL, r.id, NULL, NULL)::graphile_worker.job_spec
            FROM inserted r),
    true)

WITH n AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[],
                             $8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::text[])
               WITH ORDINALITY AS n(id, kind, model, owner, created_at, params, channel, reserved_cost, input_bytes, trace_context, key, hash, ord)),
      keyed AS (
        INSERT INTO idempotency_keys (owner, key, kind, request_hash, task_id, created_at)
        SELECT owner, key, kind, hash, id, created_at FROM n WHERE key <> ''
        ON CONFLICT (owner, key) DO UPDATE SET kind = excluded.kind, request_hash = excluded.request_hash,
             task_id = excluded.task_id, created_at = excluded.created_at
             WHERE idempotency_keys.created_at < $13
        RETURNING task_id),
      ranked AS (SELECT n.*, b.front,
             b.base + row_number() OVER (PARTITION BY n.owner, n.channel ORDER BY n.ord) - 1 AS fair_rank
        FROM n AS n
             CROSS JOIN LATERAL (SELECT COALESCE((SELECT q.fair_rank FROM tasks AS q WHERE q.channel = n.channel AND q.status = 'queued' ORDER BY q.fair_rank LIMIT 1), 0) AS front,
                                        GREATEST((SELECT r.fair_rank + 1 FROM tasks AS r WHERE r.owner = n.owner AND r.channel = n.channel AND r.status IN ('queued', 'processing')
            ORDER BY r.fair_rank DESC LIMIT 1), (SELECT q.fair_rank FROM tasks AS q WHERE q.channel = n.channel AND q.status = 'queued' ORDER BY q.fair_rank LIMIT 1), 0) AS base) AS b),
      inserted AS (
        INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params, channel, next_check_at, fair_rank, reserved_cost, input_bytes, trace_context)
        SELECT id, kind, model, owner, 'queued', created_at, '[]', params, channel,
               CASE WHEN channel = 'sandbox' THEN NULL ELSE created_at END, fair_rank, reserved_cost, input_bytes, trace_context FROM ranked
         WHERE key = '' OR id IN (SELECT task_id FROM keyed)
        RETURNING id, created_at, channel, owner),
      renders AS (SELECT i.id, i.created_at, i.owner, LEAST(r.fair_rank - r.front, 32767) AS priority, (position('"image":"https://' in r.params) > 0 OR position('"end_image":"https://' in r.params) > 0) AS fetches_inputs
            FROM inserted AS i JOIN ranked AS r ON r.id = i.id WHERE i.channel = 'sandbox'),
      jobs AS (SELECT 1 FROM graphile_worker.add_jobs(
    ARRAY(SELECT ROW('mediagate_render', json_build_object('id', r.id), NULL, to_timestamp(r.created_at / 1000.0), NULL, r.id,
                      r.priority, CASE WHEN r.fetches_inputs THEN ARRAY['key:' || r.owner, 'fetch'] ELSE ARRAY['key:' || r.owner] END)::graphile_worker.job_spec
            FROM renders r),
    true))
  SELECT id, (SELECT count(*) FROM jobs) AS added FROM inserted

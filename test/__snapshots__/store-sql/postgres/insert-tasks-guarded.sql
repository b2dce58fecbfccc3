WITH n AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[],
                                  $8::bigint[], $9::bigint[], $10::text[])
             WITH ORDINALITY AS n(id, kind, model, owner, created_at, params, channel, reserved_cost, input_bytes, trace_context, ord)),
      guard_keys AS (SELECT k.id, k.active_tasks, k.max_tasks_in_flight, k.budget FROM api_keys AS k
                       WHERE k.id IN (SELECT owner FROM n) ORDER BY k.id FOR UPDATE),
      guard_refused AS (SELECT 1 FROM (SELECT owner, count(*) AS tasks FROM n GROUP BY owner) AS b JOIN guard_keys AS k ON k.id = b.owner
                         WHERE (k.budget IS NOT NULL AND $11::int = 1)
                            OR ($12::bigint IS NOT NULL AND COALESCE(k.max_tasks_in_flight, $12) > 0
                                AND k.active_tasks + b.tasks > COALESCE(k.max_tasks_in_flight, $12))),
      ranked AS (SELECT n.*, b.front,
             b.base + row_number() OVER (PARTITION BY n.owner, n.channel ORDER BY n.ord) - 1 AS fair_rank
        FROM n AS n
             CROSS JOIN LATERAL (SELECT COALESCE((SELECT q.fair_rank FROM tasks AS q WHERE q.channel = n.channel AND q.status = 'queued' ORDER BY q.fair_rank LIMIT 1), 0) AS front,
                                        GREATEST((SELECT r.fair_rank + 1 FROM tasks AS r WHERE r.owner = n.owner AND r.channel = n.channel AND r.status IN ('queued', 'processing')
            ORDER BY r.fair_rank DESC LIMIT 1), (SELECT q.fair_rank FROM tasks AS q WHERE q.channel = n.channel AND q.status = 'queued' ORDER BY q.fair_rank LIMIT 1), 0) AS base) AS b),
      inserted AS (INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params, channel, next_check_at, fair_rank, reserved_cost, input_bytes, trace_context)
      SELECT n.id, n.kind, n.model, n.owner, 'queued', n.created_at, '[]', n.params, n.channel,
             CASE WHEN n.channel = 'sandbox' THEN NULL ELSE n.created_at END, n.fair_rank, n.reserved_cost, n.input_bytes, n.trace_context
        FROM ranked AS n
       WHERE NOT EXISTS (SELECT 1 FROM guard_refused)
   RETURNING id, created_at, channel, owner) SELECT id FROM inserted

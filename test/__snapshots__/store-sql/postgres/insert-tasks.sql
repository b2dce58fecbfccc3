INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params)
      SELECT n.id, n.kind, n.model, n.owner, 'queued', n.created_at, '[]', n.params
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[])
             AS n(id, kind, model, owner, created_at, params)
   RETURNING id, created_at

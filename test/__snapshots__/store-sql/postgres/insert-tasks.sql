INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params, channel, next_check_at)
      SELECT n.id, n.kind, n.model, n.owner, 'queued', n.created_at, '[]', n.params, n.channel,
             CASE WHEN n.channel = 'sandbox' THEN NULL ELSE n.created_at END
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[])
             AS n(id, kind, model, owner, created_at, params, channel)
   RETURNING id, created_at, channel

UPDATE tasks AS t SET status = 'completed', progress = 100, version = t.version + 1, completed_at = c.now, outputs = c.outputs, lease_expires_at = NULL
        FROM unnest($1::text[], $2::int[], $3::text[], $4::bigint[]) AS c(id, attempt, outputs, now)
       WHERE t.id = c.id AND t.status = 'processing' AND t.attempt = c.attempt
   RETURNING t.id, t.attempt

UPDATE tasks AS t SET status = 'completed', progress = 100, version = t.version + 1, completed_at = c.now, outputs = c.outputs, lease_expires_at = NULL,
          usage_seconds = c.seconds, usage_images = c.images, cost = c.cost
        FROM unnest($1::text[], $2::int[], $3::text[], $4::bigint[], $5::int[], $6::int[], $7::bigint[])
             AS c(id, attempt, outputs, now, seconds, images, cost)
       WHERE t.id = c.id AND t.status = 'processing' AND t.attempt = c.attempt
   RETURNING t.id, t.attempt

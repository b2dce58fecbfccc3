UPDATE tasks AS t
         SET status = 'processing',
             attempt = t.attempt + 1,
             version = t.version + 1,
             lease_owner = c.owner,
             lease_expires_at = c.lease_until,
             started_at = COALESCE(t.started_at, c.now),
             progress = COALESCE(t.progress, 0),
             interruptions = t.interruptions + CASE WHEN t.status = 'processing' THEN 1 ELSE 0 END
        FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS c(id, owner, now, lease_until)
       WHERE t.id = c.id AND (t.channel = 'sandbox' AND (t.status = 'queued' OR (t.status = 'processing' AND t.lease_expires_at < c.now)))
   RETURNING t.id, t.kind, t.model, t.owner, t.status, t.progress, t.created_at, t.started_at, t.completed_at, t.error, t.outputs, t.attempt, t.version, t.usage_seconds, t.usage_images, t.cost, t.params, t.lease_owner

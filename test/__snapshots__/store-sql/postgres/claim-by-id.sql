UPDATE tasks AS t
         SET status = 'processing',
             attempt = t.attempt + 1,
             version = t.version + 1,
             lease_owner = $1,
             lease_expires_at = $2,
             started_at = COALESCE(t.started_at, $3),
             progress = COALESCE(t.progress, 0),
             interruptions = t.interruptions + CASE WHEN t.status = 'processing' THEN 1 ELSE 0 END
       WHERE t.id = $4 AND (t.channel = 'sandbox' AND (t.status = 'queued' OR (t.status = 'processing' AND t.lease_expires_at < $3)))
   RETURNING id, kind, model, owner, status, progress, created_at, started_at, completed_at, error, outputs, attempt, version, usage_seconds, usage_images, cost, params, lease_owner

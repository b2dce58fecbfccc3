WITH picked AS (SELECT id FROM tasks WHERE status = 'processing' AND lease_expires_at < ?
                       ORDER BY lease_expires_at LIMIT ? )
      UPDATE tasks AS t
         SET status = 'processing',
             attempt = t.attempt + 1,
             version = t.version + 1,
             lease_owner = ?,
             lease_expires_at = ?,
             started_at = COALESCE(t.started_at, ?),
             progress = COALESCE(t.progress, 0),
             interruptions = t.interruptions + CASE WHEN t.status = 'processing' THEN 1 ELSE 0 END
       WHERE t.id IN (SELECT id FROM picked) AND t.status = 'processing' AND t.lease_expires_at < ?
   RETURNING id, kind, model, owner, status, progress, created_at, started_at, completed_at, error, outputs, attempt, version, usage_seconds, usage_images, cost, params, lease_owner

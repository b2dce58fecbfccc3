WITH picked AS (SELECT id FROM tasks WHERE status = 'queued' AND channel = 'sandbox' AND owner <> ALL ($1::text[])
                       ORDER BY fair_rank, created_at, id LIMIT $2 FOR UPDATE SKIP LOCKED)
      UPDATE tasks AS t
         SET status = 'processing',
             attempt = t.attempt + 1,
             version = t.version + 1,
             lease_owner = $3,
             lease_expires_at = $4,
             started_at = COALESCE(t.started_at, $5),
             progress = COALESCE(t.progress, 0),
             interruptions = t.interruptions + CASE WHEN t.status = 'processing' THEN 1 ELSE 0 END
       WHERE t.id IN (SELECT id FROM picked) AND t.status = 'queued' AND t.channel = 'sandbox'
   RETURNING id, kind, model, owner, status, progress, created_at, started_at, completed_at, error, outputs, attempt, version, usage_seconds, usage_images, cost, params, lease_owner

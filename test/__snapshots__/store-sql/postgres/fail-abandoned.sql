UPDATE tasks AS t SET status = 'failed', completed_at = $1, error = $2, lease_owner = NULL, lease_expires_at = NULL, version = t.version + 1,
             usage_seconds = 0, usage_images = 0, cost = 0
       WHERE t.status = 'processing' AND t.lease_expires_at < $1 AND t.interruptions + 1 >= $3
   RETURNING id

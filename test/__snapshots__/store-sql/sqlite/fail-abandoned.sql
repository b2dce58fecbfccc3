UPDATE tasks AS t SET status = 'failed', completed_at = ?, error = ?, lease_owner = NULL, lease_expires_at = NULL, version = t.version + 1,
             usage_seconds = 0, usage_images = 0, cost = 0
       WHERE t.status = 'processing' AND t.lease_expires_at < ? AND t.interruptions + 1 >= ?
   RETURNING id

UPDATE tasks AS t SET status = 'failed', completed_at = ?, error = ?, lease_owner = NULL, lease_expires_at = NULL, version = t.version + 1
       WHERE t.status = 'processing' AND t.lease_expires_at < ? AND t.interruptions + 1 >= ?
   RETURNING id

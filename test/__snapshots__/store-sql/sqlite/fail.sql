UPDATE tasks AS t SET status = 'failed', completed_at = ?, error = ?, lease_expires_at = NULL, version = t.version + 1 WHERE t.id = ? AND t.status = 'processing' AND t.attempt = ?

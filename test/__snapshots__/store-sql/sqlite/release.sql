UPDATE tasks AS t SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, version = t.version + 1 WHERE t.id = ? AND t.status = 'processing' AND t.attempt = ?

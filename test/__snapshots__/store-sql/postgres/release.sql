UPDATE tasks AS t SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, version = t.version + 1 WHERE t.id = $1 AND t.status = 'processing' AND t.attempt = $2

UPDATE tasks AS t SET lease_expires_at = $1 WHERE t.id = $2 AND t.status = 'processing' AND t.attempt = $3

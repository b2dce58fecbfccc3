UPDATE tasks AS t SET lease_expires_at = ? WHERE t.id = ? AND t.status = 'processing' AND t.attempt = ?

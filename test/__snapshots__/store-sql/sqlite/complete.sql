UPDATE tasks AS t SET status = 'completed', progress = 100, completed_at = ?, outputs = ?, lease_expires_at = NULL WHERE t.id = ? AND t.status = 'processing' AND t.attempt = ?

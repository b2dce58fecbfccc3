UPDATE tasks SET lease_expires_at = ? WHERE status = 'processing' AND lease_owner = ?

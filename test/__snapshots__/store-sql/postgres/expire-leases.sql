UPDATE tasks SET lease_expires_at = $1 WHERE status = 'processing' AND lease_owner = $2

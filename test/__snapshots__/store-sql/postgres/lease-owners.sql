SELECT DISTINCT lease_owner FROM tasks WHERE status = 'processing'

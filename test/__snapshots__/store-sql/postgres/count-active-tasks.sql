SELECT count(*) AS n FROM (SELECT 1 FROM tasks WHERE owner = $1 AND status IN ('queued', 'processing') LIMIT $2) AS active

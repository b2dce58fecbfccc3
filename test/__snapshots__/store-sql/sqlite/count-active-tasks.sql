SELECT count(*) AS n FROM (SELECT 1 FROM tasks WHERE owner = ? AND status IN ('queued', 'processing') LIMIT ?) AS active

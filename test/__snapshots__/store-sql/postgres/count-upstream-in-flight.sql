SELECT count(*) AS n FROM tasks AS t WHERE t.channel = $1 AND t.status IN ('queued', 'processing') AND t.upstream_state IS NOT NULL

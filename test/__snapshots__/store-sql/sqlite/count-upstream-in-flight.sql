SELECT count(*) AS n FROM tasks AS t WHERE t.channel = ? AND t.status IN ('queued', 'processing') AND t.upstream_state IS NOT NULL

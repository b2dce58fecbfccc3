SELECT count(*) AS n FROM tasks AS t WHERE t.channel <> 'sandbox' AND t.status IN ('queued', 'processing') AND t.channel = $1 AND t.upstream_state IS NOT NULL

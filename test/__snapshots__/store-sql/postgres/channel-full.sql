SELECT CASE WHEN (SELECT count(*) FROM tasks AS t WHERE t.channel <> 'sandbox' AND t.status IN ('queued', 'processing')) < $1 THEN 0
              WHEN (SELECT count(*) FROM (SELECT 1 FROM tasks AS t WHERE t.channel <> 'sandbox' AND t.status IN ('queued', 'processing') AND t.channel = $2 AND t.upstream_state IS NOT NULL
                                          LIMIT $1) AS held) >= $1 THEN 1
              ELSE 0 END AS full

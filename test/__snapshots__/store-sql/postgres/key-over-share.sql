SELECT CASE WHEN (SELECT count(*) FROM (SELECT 1 FROM tasks AS t WHERE t.channel <> 'sandbox' AND t.status IN ('queued', 'processing') AND t.channel = $1 AND t.owner = $2
                                                 AND t.upstream_state IS NOT NULL LIMIT $3) AS held) >= $3
              AND EXISTS (SELECT 1 FROM tasks AS t WHERE t.channel <> 'sandbox' AND t.status IN ('queued', 'processing') AND t.channel = $1 AND t.owner <> $2
                             AND t.status = 'queued' AND t.upstream_state IS NULL)
              THEN 1 ELSE 0 END AS over

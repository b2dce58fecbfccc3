SELECT CASE WHEN (SELECT count(*) FROM (SELECT 1 FROM tasks AS t WHERE t.channel <> 'sandbox' AND t.status IN ('queued', 'processing') AND t.channel = ? AND t.owner = ?
                                                 AND t.upstream_state IS NOT NULL LIMIT ?) AS held) >= ?
              AND EXISTS (SELECT 1 FROM tasks AS t WHERE t.channel <> 'sandbox' AND t.status IN ('queued', 'processing') AND t.channel = ? AND t.owner <> ?
                             AND t.status = 'queued' AND t.upstream_state IS NULL)
              THEN 1 ELSE 0 END AS over

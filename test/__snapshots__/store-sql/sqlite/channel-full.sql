SELECT CASE WHEN (SELECT count(*) FROM tasks AS t WHERE t.channel <> 'sandbox' AND t.status IN ('queued', 'processing')) < ? THEN 0
              WHEN (SELECT count(*) FROM (SELECT 1 FROM tasks AS t WHERE t.channel <> 'sandbox' AND t.status IN ('queued', 'processing') AND t.channel = ? AND t.upstream_state IS NOT NULL
                                          LIMIT ?) AS held) >= ? THEN 1
              ELSE 0 END AS full

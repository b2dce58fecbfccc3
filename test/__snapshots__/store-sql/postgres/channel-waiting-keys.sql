WITH RECURSIVE waiting (owner, n) AS (
        SELECT (SELECT t.owner FROM tasks AS t WHERE t.channel <> 'sandbox' AND t.status = 'queued' AND t.upstream_state IS NULL AND t.channel = $1 ORDER BY t.owner LIMIT 1), 1
        UNION ALL
        SELECT (SELECT t.owner FROM tasks AS t WHERE t.channel <> 'sandbox' AND t.status = 'queued' AND t.upstream_state IS NULL AND t.channel = $1 AND t.owner > w.owner ORDER BY t.owner LIMIT 1), w.n + 1
          FROM waiting AS w WHERE w.owner IS NOT NULL AND w.n < $2)
      SELECT owner FROM waiting WHERE owner IS NOT NULL

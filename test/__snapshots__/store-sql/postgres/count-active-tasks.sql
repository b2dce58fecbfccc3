SELECT (SELECT count(*) FROM tasks WHERE status = 'queued' AND owner = $1)
              + (SELECT count(*) FROM tasks WHERE status = 'processing' AND owner = $1) AS n

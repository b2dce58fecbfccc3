SELECT (SELECT count(*) FROM tasks WHERE status = 'queued' AND owner = ?)
              + (SELECT count(*) FROM tasks WHERE status = 'processing' AND owner = ?) AS n

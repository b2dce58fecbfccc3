UPDATE tasks AS t SET progress = $1, version = t.version + 1 WHERE t.id = $2 AND t.status = 'processing' AND t.attempt = $3 AND (t.progress IS NULL OR t.progress < $1)

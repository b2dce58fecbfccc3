UPDATE tasks AS t SET progress = ?, version = t.version + 1 WHERE t.id = ? AND t.status = 'processing' AND t.attempt = ? AND (t.progress IS NULL OR t.progress < ?)

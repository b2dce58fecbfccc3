UPDATE tasks AS t SET progress = ? WHERE t.id = ? AND t.status = 'processing' AND t.attempt = ? AND (t.progress IS NULL OR t.progress < ?)

DELETE FROM tasks WHERE id = $1 AND status IN ('completed', 'failed', 'cancelled') AND completed_at < $2

DELETE FROM tasks WHERE id = ? AND status IN ('completed', 'failed', 'cancelled') AND completed_at < ?

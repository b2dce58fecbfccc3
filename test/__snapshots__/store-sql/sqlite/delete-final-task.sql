DELETE FROM tasks WHERE id = ? AND owner = ? AND status IN ('completed', 'failed', 'cancelled') RETURNING id, outputs

SELECT id, outputs FROM tasks
          WHERE status IN ('completed', 'failed', 'cancelled') AND completed_at < ?
          ORDER BY completed_at LIMIT ?

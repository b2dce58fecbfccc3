SELECT id, outputs FROM tasks
          WHERE status IN ('completed', 'failed', 'cancelled') AND completed_at < $1
          ORDER BY completed_at LIMIT $2

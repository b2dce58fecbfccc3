SELECT status FROM tasks WHERE id = ?

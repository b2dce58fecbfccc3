SELECT status FROM tasks WHERE id = $1

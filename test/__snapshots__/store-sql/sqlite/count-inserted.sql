UPDATE api_keys SET active_tasks = active_tasks + ? WHERE id = ?

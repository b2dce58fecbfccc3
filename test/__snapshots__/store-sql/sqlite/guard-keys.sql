SELECT id, active_tasks, max_tasks_in_flight, CASE WHEN budget IS NULL THEN 0 ELSE 1 END AS budgeted FROM api_keys WHERE id IN (SELECT value FROM json_each(?))

UPDATE api_keys SET active_tasks = active_tasks WHERE id IN (SELECT value FROM json_each(?))
      RETURNING id, active_tasks, max_tasks_in_flight, CASE WHEN budget IS NULL THEN 0 ELSE 1 END AS budgeted

UPDATE api_keys SET
           name = CASE WHEN ? = 1 THEN ? ELSE name END,
           budget = CASE WHEN ? = 1 THEN ? ELSE budget END,
           budget_period = CASE WHEN ? = 1 THEN ? ELSE budget_period END,
           models = CASE WHEN ? = 1 THEN ? ELSE models END,
           rate_limit_per_min = CASE WHEN ? = 1 THEN ? ELSE rate_limit_per_min END,
           max_tasks_in_flight = CASE WHEN ? = 1 THEN ? ELSE max_tasks_in_flight END,
           disabled = CASE WHEN ? = 1 THEN (? = 1) ELSE disabled END
         WHERE id = ? AND revoked_at IS NULL

UPDATE api_keys SET
           name = CASE WHEN $1 = 1 THEN $2 ELSE name END,
           budget = CASE WHEN $3 = 1 THEN $4 ELSE budget END,
           budget_period = CASE WHEN $5 = 1 THEN $6 ELSE budget_period END,
           models = CASE WHEN $7 = 1 THEN $8 ELSE models END,
           rate_limit_per_min = CASE WHEN $9 = 1 THEN $10 ELSE rate_limit_per_min END,
           max_tasks_in_flight = CASE WHEN $11 = 1 THEN $12 ELSE max_tasks_in_flight END,
           disabled = CASE WHEN $13 = 1 THEN ($14 = 1) ELSE disabled END
         WHERE id = $15 AND revoked_at IS NULL

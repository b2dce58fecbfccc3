SELECT id, revoked_at, role, CASE WHEN disabled THEN 1 ELSE 0 END AS disabled, models, rate_limit_per_min, max_tasks_in_flight
           FROM api_keys WHERE hash = $1

INSERT INTO api_keys (id, hash, name, created_at, revoked_at, role, budget, budget_period, models, rate_limit_per_min, max_tasks_in_flight)
         VALUES ($1, $2, $3, $4, NULL, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (hash) DO NOTHING

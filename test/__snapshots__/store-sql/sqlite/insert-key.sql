INSERT INTO api_keys (id, hash, name, created_at, revoked_at, role, budget, budget_period, models, rate_limit_per_min, max_tasks_in_flight)
         VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (hash) DO NOTHING

SELECT id, name, role, created_at, revoked_at, CASE WHEN disabled THEN 1 ELSE 0 END AS disabled, budget, budget_period, models,
          rate_limit_per_min, max_tasks_in_flight, reserved,
          CASE WHEN spent_period >= (CASE budget_period WHEN 'day' THEN (CAST($1 AS BIGINT) / 86400000) * 86400 WHEN 'month' THEN CAST(extract(epoch FROM date_trunc('month', to_timestamp(CAST($1 AS BIGINT) / 1000) AT TIME ZONE 'UTC')) AS bigint) ELSE 0 END) THEN spent ELSE 0 END AS spent FROM api_keys ORDER BY created_at, id

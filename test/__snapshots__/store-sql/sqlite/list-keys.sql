SELECT id, name, role, created_at, revoked_at, CASE WHEN disabled THEN 1 ELSE 0 END AS disabled, budget, budget_period, models,
          rate_limit_per_min, max_tasks_in_flight, reserved,
          CASE WHEN spent_period >= (CASE budget_period WHEN 'day' THEN (CAST(? AS BIGINT) / 86400000) * 86400 WHEN 'month' THEN CAST(strftime('%s', CAST(? AS BIGINT) / 1000, 'unixepoch', 'start of month') AS INTEGER) ELSE 0 END) THEN spent ELSE 0 END AS spent FROM api_keys ORDER BY created_at, id

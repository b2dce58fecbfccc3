UPDATE api_keys
             SET spent = (SELECT COALESCE(sum(u.cost), 0) FROM usage_daily u
                           WHERE u.key_id = api_keys.id AND u.day >= to_char(to_timestamp((CASE budget_period WHEN 'day' THEN (CAST($1 AS BIGINT) / 86400000) * 86400 WHEN 'month' THEN CAST(extract(epoch FROM date_trunc('month', to_timestamp(CAST($1 AS BIGINT) / 1000) AT TIME ZONE 'UTC')) AS bigint) ELSE 0 END) * 1000 / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD')),
                 spent_period = (CASE budget_period WHEN 'day' THEN (CAST($1 AS BIGINT) / 86400000) * 86400 WHEN 'month' THEN CAST(extract(epoch FROM date_trunc('month', to_timestamp(CAST($1 AS BIGINT) / 1000) AT TIME ZONE 'UTC')) AS bigint) ELSE 0 END)
           WHERE id = $2

UPDATE api_keys
             SET spent = (SELECT COALESCE(sum(u.cost), 0) FROM usage_daily u
                           WHERE u.key_id = api_keys.id AND u.day >= strftime('%Y-%m-%d', (CASE budget_period WHEN 'day' THEN (CAST(? AS BIGINT) / 86400000) * 86400 WHEN 'month' THEN CAST(strftime('%s', CAST(? AS BIGINT) / 1000, 'unixepoch', 'start of month') AS INTEGER) ELSE 0 END) * 1000 / 1000, 'unixepoch')),
                 spent_period = (CASE budget_period WHEN 'day' THEN (CAST(? AS BIGINT) / 86400000) * 86400 WHEN 'month' THEN CAST(strftime('%s', CAST(? AS BIGINT) / 1000, 'unixepoch', 'start of month') AS INTEGER) ELSE 0 END)
           WHERE id = ?

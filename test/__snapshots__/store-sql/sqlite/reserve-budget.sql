UPDATE api_keys SET reserved = reserved + ?
       WHERE id = ? AND (budget IS NULL OR (CASE WHEN spent_period >= (CASE budget_period WHEN 'day' THEN (CAST(? AS BIGINT) / 86400000) * 86400 WHEN 'month' THEN CAST(strftime('%s', CAST(? AS BIGINT) / 1000, 'unixepoch', 'start of month') AS INTEGER) ELSE 0 END) THEN spent ELSE 0 END) + reserved + ? <= budget)

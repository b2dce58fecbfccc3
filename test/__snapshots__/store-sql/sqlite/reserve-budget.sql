UPDATE api_keys SET reserved = reserved + ?
       WHERE id = ? AND (budget IS NULL OR (CASE WHEN spent_period >= (CASE budget_period WHEN 'day' THEN (? / 86400000) * 86400 WHEN 'month' THEN CAST(strftime('%s', ? / 1000, 'unixepoch', 'start of month') AS INTEGER) ELSE 0 END) THEN spent ELSE 0 END) + reserved + ? <= budget)

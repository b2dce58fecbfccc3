UPDATE api_keys SET reserved = reserved + $1
       WHERE id = $2 AND (budget IS NULL OR (CASE WHEN spent_period >= (CASE budget_period WHEN 'day' THEN (CAST($3 AS BIGINT) / 86400000) * 86400 WHEN 'month' THEN CAST(extract(epoch FROM date_trunc('month', to_timestamp(CAST($3 AS BIGINT) / 1000) AT TIME ZONE 'UTC')) AS bigint) ELSE 0 END) THEN spent ELSE 0 END) + reserved + $1 <= budget)

SELECT CASE WHEN disabled OR revoked_at IS NOT NULL THEN 1 ELSE 0 END AS blocked FROM api_keys WHERE id = ?

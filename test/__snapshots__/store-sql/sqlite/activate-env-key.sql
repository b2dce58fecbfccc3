UPDATE api_keys SET revoked_at = NULL WHERE name = 'env' AND hash = ?

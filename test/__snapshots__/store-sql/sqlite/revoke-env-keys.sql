UPDATE api_keys SET revoked_at = ? WHERE name = 'env' AND revoked_at IS NULL

UPDATE api_keys SET revoked_at = $1 WHERE name = 'env' AND revoked_at IS NULL

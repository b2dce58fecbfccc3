UPDATE api_keys SET revoked_at = $1 WHERE id = 'key_' || substr(hash, 1, 16) AND revoked_at IS NULL

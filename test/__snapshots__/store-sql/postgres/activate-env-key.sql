UPDATE api_keys SET revoked_at = NULL, role = $1 WHERE id = 'key_' || substr(hash, 1, 16) AND hash = $2

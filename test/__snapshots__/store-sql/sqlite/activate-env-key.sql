UPDATE api_keys SET revoked_at = NULL, role = ? WHERE id = 'key_' || substr(hash, 1, 16) AND hash = ?

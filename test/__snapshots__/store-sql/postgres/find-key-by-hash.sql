SELECT id, revoked_at FROM api_keys WHERE hash = $1

INSERT INTO api_keys (id, hash, name, created_at, revoked_at) VALUES ($1, $2, $3, $4, NULL) ON CONFLICT (hash) DO NOTHING

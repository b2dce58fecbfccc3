INSERT INTO api_keys (id, hash, name, created_at, revoked_at) VALUES (?, ?, ?, ?, NULL) ON CONFLICT (hash) DO NOTHING

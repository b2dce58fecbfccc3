INSERT INTO mediagate_migrations (version, applied_at) VALUES ($1, $2)

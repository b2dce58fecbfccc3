INSERT INTO mediagate_migrations (version, applied_at) VALUES (?, ?)

CREATE TABLE IF NOT EXISTS mediagate_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)

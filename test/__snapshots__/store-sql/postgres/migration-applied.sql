SELECT version FROM mediagate_migrations WHERE version = $1

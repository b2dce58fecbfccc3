SELECT key, value FROM meta WHERE key LIKE $1 ORDER BY key

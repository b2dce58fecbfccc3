SELECT key, value FROM meta WHERE key LIKE ? ORDER BY key

SELECT value FROM meta WHERE key = $1

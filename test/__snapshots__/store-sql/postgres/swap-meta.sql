UPDATE meta SET value = $1 WHERE key = $2 AND value = $3

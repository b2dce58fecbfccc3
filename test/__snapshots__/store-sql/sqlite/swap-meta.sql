UPDATE meta SET value = ? WHERE key = ? AND value = ?

DELETE FROM webhook_endpoints WHERE id = ? AND owner = ?

DELETE FROM webhook_endpoints WHERE id = $1 AND owner = $2

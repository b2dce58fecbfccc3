SELECT id, owner, url, events, secret, created_at FROM webhook_endpoints WHERE owner = $1 ORDER BY created_at, id COLLATE "C"

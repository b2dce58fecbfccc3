SELECT id, owner, url, events, secret, created_at FROM webhook_endpoints WHERE owner = ? ORDER BY created_at, id COLLATE BINARY

SELECT id, owner, url, events, secret, created_at FROM webhook_endpoints WHERE id = ? AND (? = '' OR owner = ?)

SELECT id, owner, url, events, secret, created_at FROM webhook_endpoints WHERE id = $1 AND ($2 = '' OR owner = $2)

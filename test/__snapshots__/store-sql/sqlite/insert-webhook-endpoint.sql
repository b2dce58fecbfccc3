INSERT INTO webhook_endpoints (id, owner, url, events, secret, created_at) VALUES (?, ?, ?, ?, ?, ?)

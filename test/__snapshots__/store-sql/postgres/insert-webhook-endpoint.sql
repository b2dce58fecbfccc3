INSERT INTO webhook_endpoints (id, owner, url, events, secret, created_at) VALUES ($1, $2, $3, $4, $5, $6)

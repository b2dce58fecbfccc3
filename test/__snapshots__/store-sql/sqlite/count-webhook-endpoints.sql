SELECT count(*) AS n FROM webhook_endpoints WHERE owner = ?

DELETE FROM webhook_deliveries WHERE id = $1

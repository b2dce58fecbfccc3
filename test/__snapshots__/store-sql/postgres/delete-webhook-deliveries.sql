DELETE FROM webhook_deliveries WHERE endpoint_id = $1

SELECT min(next_attempt_at) AS due FROM webhook_deliveries WHERE status = 'pending'

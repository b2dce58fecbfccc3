SELECT kind, request_hash, task_id, created_at FROM idempotency_keys WHERE owner = $1 AND key = $2

DELETE FROM idempotency_keys WHERE created_at < $1 AND (owner, key) IN
         (SELECT owner, key FROM idempotency_keys WHERE created_at < $1 LIMIT $2)

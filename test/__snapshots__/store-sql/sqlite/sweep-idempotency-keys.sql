DELETE FROM idempotency_keys WHERE created_at < ? AND (owner, key) IN
         (SELECT owner, key FROM idempotency_keys WHERE created_at < ? LIMIT ?)

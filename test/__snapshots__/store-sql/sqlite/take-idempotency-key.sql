INSERT INTO idempotency_keys (owner, key, kind, request_hash, task_id, created_at)
       VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (owner, key) DO UPDATE SET kind = excluded.kind, request_hash = excluded.request_hash,
       task_id = excluded.task_id, created_at = excluded.created_at
       WHERE idempotency_keys.created_at < ?

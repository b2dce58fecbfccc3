INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params, channel, next_check_at, fair_rank) VALUES (?, ?, ?, ?, 'queued', ?, '[]', ?, ?,
                           CASE WHEN ? = 'sandbox' THEN NULL ELSE ? END,
                           max(COALESCE((SELECT max(r.fair_rank) + 1 FROM tasks AS r WHERE r.owner = ? AND r.channel = ? AND r.status IN ('queued', 'processing')), 0), COALESCE((SELECT min(q.fair_rank) FROM tasks AS q WHERE q.channel = ? AND q.status = 'queued'), 0)))

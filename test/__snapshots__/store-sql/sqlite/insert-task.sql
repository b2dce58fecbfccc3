INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params, channel, next_check_at, fair_rank, reserved_cost, input_bytes, trace_context) VALUES (?, ?, ?, ?, 'queued', ?, '[]', ?, ?,
                           CASE WHEN ? = 'sandbox' THEN NULL ELSE ? END,
                           max(COALESCE((SELECT r.fair_rank + 1 FROM tasks AS r WHERE r.owner = ? AND r.channel = ? AND r.status IN ('queued', 'processing')
            ORDER BY r.fair_rank DESC LIMIT 1), 0), COALESCE((SELECT q.fair_rank FROM tasks AS q WHERE q.channel = ? AND q.status = 'queued' ORDER BY q.fair_rank LIMIT 1), 0)), ?, ?, ?)

INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params, channel, next_check_at, fair_rank, reserved_cost, input_bytes, trace_context) SELECT ?, ?, ?, ?, 'queued', ?, '[]', ?, ?,
                           CASE WHEN ? = 'sandbox' THEN NULL ELSE ? END,
                           max(COALESCE((SELECT r.fair_rank + 1 FROM tasks AS r WHERE r.owner = ? AND r.channel = ? AND r.status IN ('queued', 'processing')
            ORDER BY r.fair_rank DESC LIMIT 1), 0), COALESCE((SELECT q.fair_rank FROM tasks AS q WHERE q.channel = ? AND q.status = 'queued' ORDER BY q.fair_rank LIMIT 1), 0)), ?, ?, ?
       WHERE NOT EXISTS (SELECT 1 FROM api_keys AS k WHERE k.id = ? AND ((k.budget IS NOT NULL AND ? = 1)
            OR (? IS NOT NULL AND COALESCE(k.max_tasks_in_flight, ?) > 0
                AND k.active_tasks + ? >= COALESCE(k.max_tasks_in_flight, ?))))

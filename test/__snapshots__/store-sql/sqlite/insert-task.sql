INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params, channel, next_check_at) VALUES (?, ?, ?, ?, 'queued', ?, '[]', ?, ?,
                           CASE WHEN ? = 'sandbox' THEN NULL ELSE ? END)

INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params, channel, next_check_at, fair_rank, reserved_cost, input_bytes, trace_context) VALUES (?, ?, ?, ?, 'queued', ?, '[]', ?, ?,
                           CASE WHEN ? = 'sandbox' THEN NULL ELSE ? END, ?, ?, ?, ?)

INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params) VALUES (?, ?, ?, ?, 'queued', ?, '[]', ?)

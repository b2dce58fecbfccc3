SELECT trace_context FROM tasks WHERE id = ?

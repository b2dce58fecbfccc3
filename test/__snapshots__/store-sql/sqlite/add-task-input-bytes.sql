UPDATE tasks SET input_bytes = input_bytes + CAST(? AS INTEGER)
      WHERE id = ? AND status IN ('queued', 'processing') RETURNING owner

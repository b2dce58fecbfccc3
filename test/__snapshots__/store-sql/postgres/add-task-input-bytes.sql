UPDATE tasks SET input_bytes = input_bytes + CAST($1 AS BIGINT)
      WHERE id = $2 AND status IN ('queued', 'processing') RETURNING owner
